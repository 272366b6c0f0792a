package mirror

import "github.com/prometheus/client_golang/prometheus"

// metrics are the mirror's Prometheus metrics.
type metrics struct {
	mirrored    prometheus.Counter
	errors      prometheus.Counter
	resumeIndex prometheus.Gauge
	lastIndex   prometheus.Gauge
	commitLag   prometheus.Histogram
	lagEvents   prometheus.GaugeFunc
	lagSeconds  prometheus.GaugeFunc
}

func newMetrics(m *Mirror) *metrics {
	return &metrics{
		mirrored: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_mirror_events_total",
			Help: "Events this server committed to the Kafka topic."}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_mirror_produce_errors_total",
			Help: "Mirror sessions ended by an error (produce, commit, connect, resume); each is retried after a backoff."}),
		resumeIndex: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_mirror_resume_index",
			Help: "The raft index of the last event found in the topic when the mirror last (re)started."}),
		lastIndex: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_mirror_last_index",
			Help: "The raft index of the last event committed to the topic."}),
		commitLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ordo_mirror_commit_lag_seconds",
			Help:    "Time from an event's commit in raft (leader time) to its Kafka transaction's commit, per chunk (its oldest event).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		lagEvents: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ordo_mirror_lag_events",
			Help: "Archived events not yet in the topic (while this server mirrors)."}, func() float64 { return float64(m.lagEvents()) }),
		lagSeconds: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ordo_mirror_lag_seconds",
			Help: "Age of the oldest archived event not yet in the topic (while this server mirrors)."}, func() float64 { return m.lagSeconds() }),
	}
}

func (x *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{x.mirrored, x.errors, x.resumeIndex, x.lastIndex, x.commitLag, x.lagEvents, x.lagSeconds}
}
