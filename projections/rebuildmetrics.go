package projections

import "github.com/prometheus/client_golang/prometheus"

// rebuildMetrics are a Rebuilder's: per projection, the events its
// rebuilds replayed, how far a running rebuild is behind the head, and its
// state (one series per state, 1 for the current one).
type rebuildMetrics struct {
	reg    prometheus.Registerer
	events *prometheus.CounterVec
	lag    *prometheus.GaugeVec
	state  *prometheus.GaugeVec
}

func newRebuildMetrics(reg prometheus.Registerer, projs []Projection) *rebuildMetrics {
	m := &rebuildMetrics{
		reg: reg,
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ordo_projection_rebuild_events_total",
			Help: "Archived events replayed into a projection by rebuilds since start."}, []string{"projection"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ordo_projection_rebuild_lag_events",
			Help: "Archived events a running rebuild of the projection is behind the head; 0 when none runs."}, []string{"projection"}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ordo_projection_state",
			Help: "1 for the projection's current state (ready, stale: waiting for a rebuild, rebuilding), 0 for the others."}, []string{"projection", "state"}),
	}
	for _, p := range projs {
		m.events.WithLabelValues(p.Name())
		m.lag.WithLabelValues(p.Name())
	}
	if reg != nil {
		reg.MustRegister(m.events, m.lag, m.state)
	}
	return m
}

func (m *rebuildMetrics) unregister() {
	if m.reg == nil {
		return
	}
	m.reg.Unregister(m.events)
	m.reg.Unregister(m.lag)
	m.reg.Unregister(m.state)
}
