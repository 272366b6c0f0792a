package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/defaults"
)

// Submitter runs commands; *commands.Pipeline implements it.
type Submitter interface {
	Run(ctx context.Context, name string, req commands.Request, c commands.Command) (commands.Outcome, error)
}

var _ Submitter = (*commands.Pipeline)(nil)

// Config configures a Monitor.
type Config struct {
	// Pipeline receives the status updates of nodes that missed their TTL; required.
	Pipeline Submitter
	// Nodes returns the ids of the nodes to track when Run starts: those
	// ready, initializing or disconnected in the nodes projection (a
	// disconnected node left out never goes down while this server
	// leads); required.
	Nodes func() ([]string, error)
	// Clock times the TTLs; default clock.System.
	Clock clock.Clock
	// MinTTL is the shortest TTL handed out; default 10s.
	MinTTL time.Duration
	// MaxHeartbeatsPerSecond bounds the heartbeat rate of the whole fleet:
	// the TTL is at least fleet size / this rate; default 50.
	MaxHeartbeatsPerSecond float64
	// Grace is added to a node's TTL before it counts as missed, for
	// network and retry delays; default 10s.
	Grace time.Duration
	// FailoverTTL is the TTL every node gets when Run starts, after a
	// leader election; default 5m.
	FailoverTTL time.Duration
	// Seed seeds the TTL jitter; default 0.
	Seed uint64
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the monitor's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, MinTTL: 10 * time.Second, MaxHeartbeatsPerSecond: 50,
		Grace: 10 * time.Second, FailoverTTL: 5 * time.Minute, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Pipeline == nil:
		return errors.New("heartbeat: Pipeline is required")
	case c.Nodes == nil:
		return errors.New("heartbeat: Nodes is required")
	case c.MinTTL < 0, c.Grace < 0, c.FailoverTTL < 0, c.MaxHeartbeatsPerSecond < 0:
		return errors.New("heartbeat: durations and rates must not be negative")
	}
	return nil
}

// Monitor tracks node heartbeats while this server leads.
type Monitor struct {
	cfg         Config
	log         *slog.Logger
	wake        chan struct{}
	tracked     prometheus.Gauge
	missedTotal prometheus.Counter

	mu struct {
		sync.Mutex
		deadlines map[string]time.Time
		rng       *rand.Rand
		// armed is the deadline Run's timer waits for; zero when none.
		armed time.Time
	}
}

// New returns a Monitor; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Monitor, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Monitor{cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1),
		tracked: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_heartbeat_tracked_nodes",
			Help: "Nodes whose heartbeat the leader is tracking."}),
		missedTotal: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_heartbeat_missed_total",
			Help: "Heartbeats missed: nodes marked down or disconnected, or down at the end of their disconnect window."}),
	}
	m.mu.deadlines = map[string]time.Time{}
	m.mu.rng = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(m.tracked, m.missedTotal)
	}
	return m, nil
}

// Close unregisters the monitor's metrics.
func (m *Monitor) Close() {
	if m.cfg.Registerer != nil {
		m.cfg.Registerer.Unregister(m.tracked)
		m.cfg.Registerer.Unregister(m.missedTotal)
	}
}

// Name implements supervisor.Processor.
func (m *Monitor) Name() string { return "heartbeat" }

// TTL returns the TTL, before jitter, of a fleet of n nodes:
// max(MinTTL, n / MaxHeartbeatsPerSecond).
func (m *Monitor) TTL(n int) time.Duration {
	scaled := time.Duration(float64(n) / m.cfg.MaxHeartbeatsPerSecond * float64(time.Second))
	return max(m.cfg.MinTTL, scaled)
}

// Heartbeat resets the TTL of node id and returns the TTL the node must
// heartbeat within; the node counts as missed after that TTL plus Grace.
func (m *Monitor) Heartbeat(id string) time.Duration {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.mu.deadlines)
	if _, ok := m.mu.deadlines[id]; !ok {
		n++
	}
	base := m.TTL(n)
	ttl := base + time.Duration(m.mu.rng.Int64N(int64(base)))
	m.setLocked(id, now.Add(ttl+m.cfg.Grace))
	return ttl
}

// Forget stops tracking node id.
func (m *Monitor) Forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mu.deadlines, id)
	m.tracked.Set(float64(len(m.mu.deadlines)))
}

// Tracked returns how many nodes are tracked.
func (m *Monitor) Tracked() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mu.deadlines)
}

// setLocked sets id's deadline and wakes Run when it is due before the
// deadline Run waits for.
func (m *Monitor) setLocked(id string, deadline time.Time) {
	m.mu.deadlines[id] = deadline
	m.tracked.Set(float64(len(m.mu.deadlines)))
	if m.mu.armed.IsZero() || deadline.Before(m.mu.armed) {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
}

// Run implements supervisor.Processor: it tracks every ready or
// initializing node with FailoverTTL, then acts on missed TTLs until ctx
// ends.
func (m *Monitor) Run(ctx context.Context) error {
	ids, err := m.cfg.Nodes()
	if err != nil {
		return fmt.Errorf("heartbeat: list nodes: %w", err)
	}
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	clear(m.mu.deadlines)
	for _, id := range ids {
		m.mu.deadlines[id] = now.Add(m.cfg.FailoverTTL)
	}
	m.mu.armed = time.Time{}
	m.tracked.Set(float64(len(m.mu.deadlines)))
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		clear(m.mu.deadlines)
		m.mu.armed = time.Time{}
		m.tracked.Set(0)
		m.mu.Unlock()
	}()
	for {
		expired, next := m.due(m.cfg.Clock.Now())
		for _, id := range expired {
			if err := m.expire(ctx, id); err != nil {
				return err
			}
		}
		if len(expired) > 0 {
			continue
		}
		var (
			timer clock.Timer
			fired <-chan time.Time
		)
		if !next.IsZero() {
			timer = m.cfg.Clock.NewTimer(next.Sub(m.cfg.Clock.Now()))
			fired = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-m.wake:
		case <-fired:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// due removes and returns the nodes whose deadline has passed at now, and
// returns the earliest deadline left, which Run arms its timer for.
func (m *Monitor) due(now time.Time) (expired []string, next time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, d := range m.mu.deadlines {
		if !d.After(now) {
			expired = append(expired, id)
			delete(m.mu.deadlines, id)
		} else if next.IsZero() || d.Before(next) {
			next = d
		}
	}
	m.mu.armed = next
	m.tracked.Set(float64(len(m.mu.deadlines)))
	return expired, next
}

// maxAttempts bounds how often a missed heartbeat is decided again after
// its decision went stale.
const maxAttempts = 3

// expire acts on node id missing its deadline with a miss command: the
// node goes down or disconnected, or, disconnected already, down once its
// disconnect window has passed. A node left disconnected is tracked again
// until its window ends, unless it heartbeats first. expire returns an
// error only when ctx ended.
func (m *Monitor) expire(ctx context.Context, id string) error {
	cmd := &miss{id: id}
	req := commands.Request{Actor: "system:heartbeat"}
	for attempt := 1; ; attempt++ {
		_, err := m.cfg.Pipeline.Run(ctx, "node.status", req, cmd)
		var (
			nf *commands.NotFoundError
			ce *commands.ConflictError
		)
		switch {
		case err == nil:
			m.missed(id, cmd)
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &nf):
			return nil // deregistered meanwhile
		case errors.As(err, &ce) && attempt < maxAttempts:
			continue
		}
		// Try again after a grace period, unless a heartbeat came meanwhile.
		m.log.Warn("marking node after a missed heartbeat failed; will retry", "node", id, "err", err)
		m.mu.Lock()
		if _, ok := m.mu.deadlines[id]; !ok {
			m.setLocked(id, m.cfg.Clock.Now().Add(m.cfg.Grace))
		}
		m.mu.Unlock()
		return nil
	}
}

// missed records what the applied miss command c did to node id, and
// tracks a node it left disconnected until the end of its window.
func (m *Monitor) missed(id string, c *miss) {
	if c.changed {
		m.missedTotal.Inc()
		m.log.Info("node missed its heartbeat", "node", id, "status", c.status)
	}
	if c.status != events.NodeStatusDisconnected {
		return
	}
	if c.forever {
		m.log.Info("disconnected node stays so until it heartbeats: an allocation on it is never lost", "node", id)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mu.deadlines[id]; !ok { // a heartbeat came meanwhile
		m.setLocked(id, m.cfg.Clock.Now().Add(c.left))
	}
}
