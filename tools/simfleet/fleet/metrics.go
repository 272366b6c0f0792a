package fleet

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Stats is a snapshot of the fleet's counters since New.
type Stats struct {
	Nodes int
	// Connected is how many nodes are asked to be connected; Ready how
	// many of those have finished starting their session (registered,
	// reported, heartbeated ready) and not lost it since.
	Connected, Ready int
	Registrations    uint64
	// Heartbeats counts heartbeats answered 200; TTLSum adds the TTLs
	// those and the registrations answered.
	Heartbeats uint64
	TTLSum     time.Duration
	TTLs       uint64
	// AllocUpdateCalls counts update calls answered 200; AllocUpdates the
	// allocation states they carried, by client status.
	AllocUpdateCalls uint64
	AllocUpdates     map[string]uint64
	// AllocsRunning is how many allocations run on the fleet with the
	// servers knowing it.
	AllocsRunning int64
	// WatchAnswers counts long-poll answers with a new index;
	// WatchChanged the answers a node acted on (something to start, stop,
	// forget or report). Answers coalesce while a node is busy, so the
	// difference is at least the answers that a change elsewhere woke.
	WatchAnswers, WatchChanged uint64
	// Errors counts failed calls by "<call>/<reason>" (errReason).
	Errors map[string]uint64
}

// ErrorCount is the sum of Errors.
func (s Stats) ErrorCount() uint64 {
	var n uint64
	for _, v := range s.Errors {
		n += v
	}
	return n
}

// MeanTTL is the mean TTL the servers answered.
func (s Stats) MeanTTL() time.Duration {
	if s.TTLs == 0 {
		return 0
	}
	return s.TTLSum / time.Duration(s.TTLs)
}

// maxSamples bounds the heartbeat latencies kept between two takes.
const maxSamples = 1 << 20

// metrics holds the fleet's counters: atomics read by Stats, exported to
// Prometheus through Collectors.
type metrics struct {
	connected, ready           atomic.Int64
	registrations, heartbeats  atomic.Uint64
	ttlSum, ttls               atomic.Uint64
	updateCalls                atomic.Uint64
	allocsRunning              atomic.Int64
	watchAnswers, watchChanged atomic.Uint64
	hbLatency                  prometheus.Histogram
	updates                    *prometheus.CounterVec
	errors                     *prometheus.CounterVec

	mu struct {
		sync.Mutex
		errors  map[string]uint64
		updates map[string]uint64
		samples []time.Duration
	}
}

func newMetrics() *metrics {
	m := &metrics{
		hbLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "simfleet_heartbeat_seconds", Help: "Heartbeat call latency, answered 200.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simfleet_alloc_updates_total", Help: "Allocation states reported and acknowledged, by client status."},
			[]string{"status"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simfleet_errors_total", Help: "Failed calls by call and reason."}, []string{"call", "reason"}),
	}
	m.mu.errors = map[string]uint64{}
	m.mu.updates = map[string]uint64{}
	return m
}

func (m *metrics) heartbeat(d, ttl time.Duration) {
	m.heartbeats.Add(1)
	m.ttl(ttl)
	m.hbLatency.Observe(d.Seconds())
	m.mu.Lock()
	if len(m.mu.samples) < maxSamples {
		m.mu.samples = append(m.mu.samples, d)
	}
	m.mu.Unlock()
}

func (m *metrics) ttl(ttl time.Duration) {
	m.ttlSum.Add(uint64(ttl))
	m.ttls.Add(1)
}

func (m *metrics) updated(us []allocUpdate) {
	m.updateCalls.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, u := range us {
		m.mu.updates[u.ClientStatus]++
		m.updates.WithLabelValues(u.ClientStatus).Inc()
	}
}

func (m *metrics) failed(call string, err error) {
	reason := errReason(err)
	m.errors.WithLabelValues(call, reason).Inc()
	m.mu.Lock()
	m.mu.errors[call+"/"+reason]++
	m.mu.Unlock()
}

// takeSamples returns the heartbeat latencies since the last take, sorted.
func (m *metrics) takeSamples() []time.Duration {
	m.mu.Lock()
	s := m.mu.samples
	m.mu.samples = nil
	m.mu.Unlock()
	slices.Sort(s)
	return s
}

func (m *metrics) stats(nodes int) Stats {
	s := Stats{
		Nodes: nodes, Connected: int(m.connected.Load()), Ready: int(m.ready.Load()),
		Registrations: m.registrations.Load(), Heartbeats: m.heartbeats.Load(),
		TTLSum: time.Duration(m.ttlSum.Load()), TTLs: m.ttls.Load(),
		AllocUpdateCalls: m.updateCalls.Load(), AllocsRunning: m.allocsRunning.Load(),
		WatchAnswers: m.watchAnswers.Load(), WatchChanged: m.watchChanged.Load(),
		AllocUpdates: map[string]uint64{}, Errors: map[string]uint64{},
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.mu.updates {
		s.AllocUpdates[k] = v
	}
	for k, v := range m.mu.errors {
		s.Errors[k] = v
	}
	return s
}

// collectors returns the fleet's Prometheus collectors.
func (m *metrics) collectors(nodes int) []prometheus.Collector {
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	return []prometheus.Collector{
		m.hbLatency, m.updates, m.errors,
		gauge("simfleet_nodes", "Simulated nodes.", func() float64 { return float64(nodes) }),
		gauge("simfleet_nodes_connected", "Nodes asked to be connected.", func() float64 { return float64(m.connected.Load()) }),
		gauge("simfleet_nodes_ready", "Nodes whose session has started.", func() float64 { return float64(m.ready.Load()) }),
		gauge("simfleet_allocs_running", "Allocations running with the servers knowing it.",
			func() float64 { return float64(m.allocsRunning.Load()) }),
		counter("simfleet_registrations_total", "Registrations answered 200.", func() float64 { return float64(m.registrations.Load()) }),
		counter("simfleet_heartbeats_total", "Heartbeats answered 200.", func() float64 { return float64(m.heartbeats.Load()) }),
		counter("simfleet_alloc_update_calls_total", "Allocation update calls answered 200.",
			func() float64 { return float64(m.updateCalls.Load()) }),
		counter("simfleet_watch_answers_total", "Allocation long-poll answers with a new index.",
			func() float64 { return float64(m.watchAnswers.Load()) }),
		counter("simfleet_watch_changed_total", "Long-poll answers a node acted on.",
			func() float64 { return float64(m.watchChanged.Load()) }),
	}
}
