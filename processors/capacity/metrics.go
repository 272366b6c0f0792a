package capacity

import "github.com/prometheus/client_golang/prometheus"

// metrics are the processor's Prometheus metrics, by pool.
type metrics struct {
	filed, released, returns *prometheus.CounterVec
	outstanding, waiting     *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		filed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_capacity_requests_filed_total",
			Help: "Node requests filed for blocked evals, by node pool."}, []string{"pool"}),
		released: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_capacity_requests_released_total",
			Help: "Open node requests deleted because they were no longer needed, by node pool."}, []string{"pool"}),
		returns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_capacity_idle_returns_total",
			Help: "Idle launched instances given back (node drained, request or instance deleted), by node pool."}, []string{"pool"}),
		outstanding: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ordo_capacity_requests_outstanding",
			Help: "Open node requests of capacity on demand, by node pool."}, []string{"pool"}),
		waiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ordo_capacity_placements_waiting",
			Help: "Placements blocked evals failed for lack of capacity, by node pool."}, []string{"pool"}),
	}
	if reg != nil {
		reg.MustRegister(m.filed, m.released, m.returns, m.outstanding, m.waiting)
	}
	return m
}

func (m *metrics) unregister(reg prometheus.Registerer) {
	if reg == nil {
		return
	}
	for _, c := range []prometheus.Collector{m.filed, m.released, m.returns, m.outstanding, m.waiting} {
		reg.Unregister(c)
	}
}
