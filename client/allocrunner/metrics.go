package allocrunner

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the alloc runners' counters, shared by every runner of a
// client. A nil *Metrics counts nothing.
type Metrics struct {
	TaskStarts     prometheus.Counter
	TaskRestarts   prometheus.Counter
	TaskFailures   prometheus.Counter
	TasksRecovered prometheus.Counter
	TasksLost      prometheus.Counter
}

// NewMetrics returns the counters, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "ordo", Subsystem: "client", Name: name, Help: help})
	}
	m := &Metrics{
		TaskStarts:     c("task_starts_total", "Task start attempts the driver accepted."),
		TaskRestarts:   c("task_restarts_total", "Task restarts decided by restart policies."),
		TaskFailures:   c("task_failures_total", "Tasks that ended failed."),
		TasksRecovered: c("tasks_recovered_total", "Tasks re-attached after a client restart."),
		TasksLost:      c("tasks_lost_total", "Tasks found gone after a client restart."),
	}
	if reg != nil {
		reg.MustRegister(m.TaskStarts, m.TaskRestarts, m.TaskFailures, m.TasksRecovered, m.TasksLost)
	}
	return m
}

func (m *Metrics) inc(f func(*Metrics) prometheus.Counter) {
	if m != nil {
		f(m).Inc()
	}
}
