package volumewatcher

import "github.com/prometheus/client_golang/prometheus"

// metrics are the watcher's Prometheus metrics.
type metrics struct {
	queue   prometheus.Gauge
	latency prometheus.Histogram
	freed   prometheus.Counter
	retries prometheus.Counter
	calls   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		queue: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_volumewatcher_queue",
			Help: "Past CSI claims not yet freed at the end of the last pass."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ordo_volumewatcher_release_seconds",
			Help:    "Time from the watcher first seeing a past claim to recording it freed.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18)}),
		freed: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_volumewatcher_freed_total",
			Help: "CSI claims the watcher freed."}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_volumewatcher_retries_total",
			Help: "Failed detach calls scheduled for a retry."}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_volumewatcher_calls_total",
			Help: "Detach calls, by step (node, controller) and result (ok, error)."}, []string{"step", "result"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.queue, m.latency, m.freed, m.retries, m.calls} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
