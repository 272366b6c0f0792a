package fsm

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

type fsmMetrics struct {
	reg        prometheus.Registerer
	entries    prometheus.Counter
	rejections prometheus.Counter
	archiveLen prometheus.GaugeFunc
	// batchSeconds is the time to apply one raft batch, commit included.
	batchSeconds prometheus.Histogram
	// commitSeconds is the Pebble commit's part of batchSeconds.
	commitSeconds prometheus.Histogram
	// entrySeconds is the time to apply one entry of a batch, the
	// batch's commit not included.
	entrySeconds prometheus.Histogram
	// maxNanos is the longest batch since FSM.MaxApply last read it.
	maxNanos *atomic.Int64
	// maxEntryNanos is the longest entry since FSM.MaxEntryApply last
	// read it.
	maxEntryNanos *atomic.Int64
}

// observeMax keeps the longest batch apply.
func (m fsmMetrics) observeMax(d time.Duration) { keepMax(m.maxNanos, d) }

// observeEntry records one entry's apply and keeps the longest.
func (m fsmMetrics) observeEntry(d time.Duration) {
	m.entrySeconds.Observe(d.Seconds())
	keepMax(m.maxEntryNanos, d)
}

// keepMax raises max to d when d is longer.
func keepMax(max *atomic.Int64, d time.Duration) {
	for {
		old := max.Load()
		if int64(d) <= old || max.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

func newFSMMetrics(reg prometheus.Registerer, store *kv.Store) fsmMetrics {
	m := fsmMetrics{
		reg: reg, maxNanos: new(atomic.Int64), maxEntryNanos: new(atomic.Int64),
		entries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_fsm_entries_applied_total", Help: "Entries applied by the FSM since start."}),
		rejections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_fsm_rejections_total", Help: "Entries rejected at apply by a failed precondition."}),
		archiveLen: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ordo_archive_events", Help: "Events in the archive."}, func() float64 {
			n, _ := archive.Len(store)
			return float64(n)
		}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_fsm_batch_apply_seconds", Help: "Time to apply one raft batch of entries and commit it.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ordo_fsm_batch_commit_seconds",
			Help:    "Time to commit one raft batch's writes to Pebble: the storage part of ordo_fsm_batch_apply_seconds.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		entrySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_fsm_entry_apply_seconds",
			Help: "Time to apply one raft entry's command to the projections, its batch's commit not included.",
			// 10 ms is a bound: what an apply should stay under.
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}),
	}
	if reg != nil {
		reg.MustRegister(m.entries, m.rejections, m.archiveLen, m.batchSeconds, m.commitSeconds, m.entrySeconds)
	}
	return m
}

func (m fsmMetrics) unregister() {
	if m.reg == nil {
		return
	}
	m.reg.Unregister(m.entries)
	m.reg.Unregister(m.rejections)
	m.reg.Unregister(m.archiveLen)
	m.reg.Unregister(m.batchSeconds)
	m.reg.Unregister(m.commitSeconds)
	m.reg.Unregister(m.entrySeconds)
}
