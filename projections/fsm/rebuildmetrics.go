package fsm

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/slab"
)

// rebuildMetrics are a Rebuilder's: per projection, the events its
// rebuilds replayed, how far a running rebuild is behind the head, and its
// state (one series per state, 1 for the current one), how long the
// last switch paused writes and reads, and the memory the process's
// rebuilds hold outside Go's heap (storage/slab), which Go's own memory
// metrics leave out.
type rebuildMetrics struct {
	reg    prometheus.Registerer
	events *prometheus.CounterVec
	lag    *prometheus.GaugeVec
	state  *prometheus.GaugeVec
	pause  *prometheus.GaugeVec
	memory prometheus.GaugeFunc
}

func newRebuildMetrics(reg prometheus.Registerer, projs []projections.Projection) *rebuildMetrics {
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
		pause: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ordo_projection_switch_pause_seconds",
			Help: "How long the last online rebuild's switch paused writes (the FSM applied nothing) and, within that, reads."}, []string{"paused"}),
		memory: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ordo_projection_rebuild_memory_bytes",
			Help: "Bytes the process's running rebuilds, verifies and replays hold outside Go's heap (their row logs and arenas); 0 when none runs."},
			func() float64 { return float64(slab.InUse()) }),
	}
	for _, p := range projs {
		m.events.WithLabelValues(p.Name())
		m.lag.WithLabelValues(p.Name())
	}
	if reg != nil {
		reg.MustRegister(m.events, m.lag, m.state, m.pause, m.memory)
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
	m.reg.Unregister(m.pause)
	m.reg.Unregister(m.memory)
}
