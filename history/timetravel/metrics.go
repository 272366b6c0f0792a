package timetravel

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	reg               prometheus.Registerer
	readSeconds       prometheus.Histogram
	versionsReads     prometheus.Counter
	versionsDropped   prometheus.Counter
	versionsSeeds     prometheus.Counter
	versionsPruned    prometheus.Counter
	versionsBytes     prometheus.GaugeFunc
	versionsLag       prometheus.GaugeFunc
	backfills         prometheus.Counter
	backfillEvents    prometheus.Counter
	backfillRemaining prometheus.GaugeFunc
}

func newMetrics(reg prometheus.Registerer, t *TimeTravel) *metrics {
	m := &metrics{
		reg: reg,
		readSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_timetravel_open_seconds", Help: "Time to open the state at a past index.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		versionsReads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_versions_reads_total", Help: "Reads of a past state served from the versions store."}),
		versionsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_versions_dropped_total",
			Help: "Committed FSM batches the versions writer fell too far behind to take: the store is seeded again after each and the gap backfilled."}),
		versionsSeeds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_versions_seeds_total", Help: "Seeds of the versions store from the live state (at start and after each gap)."}),
		versionsPruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_versions_pruned_total", Help: "Row versions pruned from the versions store, older than VersionsKept entries."}),
		versionsBytes: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ordo_timetravel_versions_bytes", Help: "Disk space of the versions store."},
			func() float64 { return float64(t.VersionsBytes()) }),
		versionsLag: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ordo_timetravel_versions_lag_entries", Help: "Indexes applied that the versions store does not hold yet."},
			func() float64 { return float64(t.VersionsLag()) }),
		backfills: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_backfills_total", Help: "Ranges of the versions store backfilled from the archive."}),
		backfillEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_backfill_events_total", Help: "Archived events replayed to backfill the versions store."}),
		backfillRemaining: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ordo_timetravel_backfill_remaining_entries",
			Help: "Indexes the backfill under way has still to replay (0: none under way)."},
			func() float64 {
				if b := t.backfillStatus(); b != nil {
					return float64(b.To + 1 - b.Reached)
				}
				return 0
			}),
	}
	if reg != nil {
		for _, c := range m.collectors() {
			reg.MustRegister(c)
		}
	}
	return m
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.readSeconds, m.versionsReads, m.versionsDropped, m.versionsSeeds, m.versionsPruned,
		m.versionsBytes, m.versionsLag, m.backfills, m.backfillEvents, m.backfillRemaining}
}

func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range m.collectors() {
		m.reg.Unregister(c)
	}
}
