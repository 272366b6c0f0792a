package timetravel

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	reg              prometheus.Registerer
	taken            prometheus.Counter
	pruned           prometheus.Counter
	failures         prometheus.Counter
	lastIndex        prometheus.Gauge
	bytes            prometheus.GaugeFunc
	seconds          prometheus.Histogram
	materialisations prometheus.Counter
	strays           prometheus.Counter
	readSeconds      prometheus.Histogram
	redoApplied      prometheus.Counter
	redoDropped      prometheus.Counter
	redoBytes        prometheus.GaugeFunc
	versionsReads    prometheus.Counter
	versionsDropped  prometheus.Counter
	versionsSeeds    prometheus.Counter
	versionsPruned   prometheus.Counter
	versionsBytes    prometheus.GaugeFunc
	versionsLag      prometheus.GaugeFunc
}

func newMetrics(reg prometheus.Registerer, t *TimeTravel) *metrics {
	m := &metrics{
		reg: reg,
		taken: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_checkpoints_taken_total", Help: "Checkpoints of the state store taken since start."}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_checkpoints_pruned_total", Help: "Checkpoints removed since start, past the number kept."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_checkpoint_failures_total", Help: "Checkpoints that failed since start."}),
		lastIndex: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ordo_checkpoint_last_index", Help: "Applied index of the newest checkpoint."}),
		bytes: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ordo_checkpoint_bytes",
			Help: "Disk space of the kept checkpoints, each file once (tables shared with the live store included)."},
			func() float64 { return float64(t.cps.bytes()) }),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_checkpoint_seconds", Help: "Time to take, flush and publish one checkpoint.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}),
		materialisations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_materialisations_total", Help: "States materialised at a past index (cache misses)."}),
		strays: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_strays_total",
			Help: "Reads of a past state that touched a table their endpoint does not declare, and were read again from every projection."}),
		readSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ordo_timetravel_open_seconds", Help: "Time to open the state at a past index, cache hits included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		redoApplied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_redo_applied_total", Help: "Redo records (committed FSM batches) applied to materialise past states."}),
		redoDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_redo_dropped_total",
			Help: "Committed FSM batches not recorded in the redo log (writer behind or failing): reads across them replay events."}),
		redoBytes: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ordo_timetravel_redo_bytes", Help: "Disk space of the redo log."},
			func() float64 { return float64(t.RedoBytes()) }),
		versionsReads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_versions_reads_total", Help: "Reads of a past state served from the versions store."}),
		versionsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordo_timetravel_versions_dropped_total",
			Help: "Committed FSM batches the versions writer fell too far behind to take: the store is seeded again after each."}),
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
	}
	if reg != nil {
		for _, c := range m.collectors() {
			reg.MustRegister(c)
		}
	}
	return m
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.taken, m.pruned, m.failures, m.lastIndex, m.bytes, m.seconds, m.materialisations, m.strays, m.readSeconds,
		m.redoApplied, m.redoDropped, m.redoBytes, m.versionsReads, m.versionsDropped, m.versionsSeeds, m.versionsPruned, m.versionsBytes, m.versionsLag}
}

func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range m.collectors() {
		m.reg.Unregister(c)
	}
}
