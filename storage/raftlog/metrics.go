package raftlog

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	reg    prometheus.Registerer
	commit prometheus.Histogram
	apply  prometheus.Histogram
	batch  prometheus.Histogram
	store  prometheus.Histogram
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
	}
	if reg != nil {
		reg.MustRegister(m.commit, m.apply, m.batch, m.store)
	}
	return m
}

func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	m.reg.Unregister(m.commit)
	m.reg.Unregister(m.apply)
	m.reg.Unregister(m.batch)
	m.reg.Unregister(m.store)
}
