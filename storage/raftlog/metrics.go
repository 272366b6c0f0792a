package raftlog

import "github.com/prometheus/client_golang/prometheus"

// metrics are the node's: commits, FSM batches, the log store, and the
// readiness and leadership confirmations of reads (read.go).
type metrics struct {
	reg    prometheus.Registerer
	commit prometheus.Histogram
	apply  prometheus.Histogram
	batch  prometheus.Histogram
	store  prometheus.Histogram
	// ready, confirm, rounds and failures measure read.go.
	ready    prometheus.Histogram
	confirm  prometheus.Histogram
	rounds   prometheus.Counter
	failures prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		reg: reg,
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_raft_commit_seconds", Help: "Time from Append to the entry applied on the leader.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		apply: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_fsm_apply_batch_seconds", Help: "Time the FSM took to apply one batch of entries.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 2, 18)}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_fsm_apply_batch_entries", Help: "Entries per FSM apply batch.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11)}),
		store: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_raft_store_logs_seconds", Help: "Time to append (and fsync) a batch of entries to the raft log.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16)}),
		ready: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_raft_leader_ready_seconds", Help: "Time from winning an election to having applied every earlier entry (the term's barrier).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		confirm: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_raft_read_confirm_seconds", Help: "Time a consistent read waited for leadership to be confirmed by a quorum.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		rounds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_raft_read_confirm_rounds_total", Help: "Leadership confirmations (a barrier committed by a quorum) run for consistent reads; concurrent reads share one."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_raft_read_confirm_failures_total", Help: "Leadership confirmations that failed: the node was no longer the leader."}),
	}
	if reg != nil {
		reg.MustRegister(m.collectors()...)
	}
	return m
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.commit, m.apply, m.batch, m.store, m.ready, m.confirm, m.rounds, m.failures}
}

func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range m.collectors() {
		m.reg.Unregister(c)
	}
}
