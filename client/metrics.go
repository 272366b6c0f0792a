package client

import "github.com/prometheus/client_golang/prometheus"

// metrics are the client's queue sizes, latencies and failures.
type metrics struct {
	runners           prometheus.GaugeFunc
	updateQueue       prometheus.GaugeFunc
	updateSeconds     prometheus.Histogram
	updateFailures    prometheus.Counter
	heartbeatSeconds  prometheus.Histogram
	heartbeatFailures prometheus.Counter
	watchFailures     prometheus.Counter
	allocsRemoved     prometheus.Counter
}

func newMetrics(c *Client) *metrics {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "ordo", Subsystem: "client", Name: name, Help: help}
	}
	hist := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "ordo", Subsystem: "client", Name: name,
			Help: help, Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)})
	}
	return &metrics{
		runners: prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("alloc_runners", "Allocations the client holds a runner for.")),
			func() float64 { return float64(c.runnerCount()) }),
		updateQueue: prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("alloc_update_queue", "Allocations with changes not yet acknowledged by the servers.")),
			func() float64 { return float64(c.dirtyCount()) }),
		updateSeconds:     hist("alloc_update_seconds", "Latency of successful alloc update calls."),
		updateFailures:    prometheus.NewCounter(prometheus.CounterOpts(opts("alloc_update_failures_total", "Failed alloc update calls."))),
		heartbeatSeconds:  hist("heartbeat_seconds", "Latency of successful register and heartbeat calls."),
		heartbeatFailures: prometheus.NewCounter(prometheus.CounterOpts(opts("heartbeat_failures_total", "Failed register and heartbeat calls."))),
		watchFailures:     prometheus.NewCounter(prometheus.CounterOpts(opts("watch_failures_total", "Failed allocation watch queries."))),
		allocsRemoved: prometheus.NewCounter(prometheus.CounterOpts(opts("allocs_removed_total",
			"Allocations killed and removed because the servers no longer list them."))),
	}
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.runners, m.updateQueue, m.updateSeconds, m.updateFailures,
		m.heartbeatSeconds, m.heartbeatFailures, m.watchFailures, m.allocsRemoved}
}
