package broker

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	reg    prometheus.Registerer
	gauge  *prometheus.GaugeVec
	failed prometheus.Counter
	// removed counts evals dropped because they were deleted (Remove).
	removed prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		reg: reg,
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ordo_broker_evals", Help: "Evals held by the eval broker, by state."}, []string{"state"}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_broker_failed_evals_total", Help: "Evals that exceeded the delivery limit."}),
		removed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_broker_removed_evals_total", Help: "Evals dropped from the broker because they were deleted."}),
	}
	if reg != nil {
		reg.MustRegister(m.gauge, m.failed, m.removed)
	}
	return m
}

func (m *metrics) set(s Stats) {
	m.gauge.WithLabelValues("ready").Set(float64(s.Ready))
	m.gauge.WithLabelValues("unacked").Set(float64(s.Unacked))
	m.gauge.WithLabelValues("waiting").Set(float64(s.Waiting))
	m.gauge.WithLabelValues("delayed").Set(float64(s.Delayed))
	m.gauge.WithLabelValues("failed").Set(float64(s.Failed))
}

func (m *metrics) unregister() {
	if m.reg != nil {
		m.reg.Unregister(m.gauge)
		m.reg.Unregister(m.failed)
		m.reg.Unregister(m.removed)
	}
}
