package services

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the checks' counters and latencies, shared by every
// allocation of a client. A nil *Metrics counts nothing.
type Metrics struct {
	// Checks counts checks run, by result (passing, warning, critical).
	Checks *prometheus.CounterVec
	// CheckSeconds is how long checks take to run.
	CheckSeconds prometheus.Histogram
	// CheckRestarts counts tasks restarted by check_restart.
	CheckRestarts prometheus.Counter
}

// NewMetrics returns the metrics (register them with Collectors).
func NewMetrics() *Metrics {
	return &Metrics{
		Checks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ordo", Subsystem: "client",
			Name: "checks_total", Help: "Service checks run, by result."}, []string{"result"}),
		CheckSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "ordo", Subsystem: "client",
			Name: "check_seconds", Help: "Latency of service checks.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}),
		CheckRestarts: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "ordo", Subsystem: "client",
			Name: "check_restarts_total", Help: "Tasks restarted by check_restart."}),
	}
}

// Collectors returns the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	if m == nil {
		return nil
	}
	return []prometheus.Collector{m.Checks, m.CheckSeconds, m.CheckRestarts}
}

func (m *Metrics) observe(result string, seconds float64) {
	if m != nil {
		m.Checks.WithLabelValues(result).Inc()
		m.CheckSeconds.Observe(seconds)
	}
}

func (m *Metrics) restarted() {
	if m != nil {
		m.CheckRestarts.Inc()
	}
}
