package launcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/processors/follow"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// Component liveness (P10) lives in the leader's memory, as Nomad keeps
// node heartbeats: a registered component heartbeats to the leader
// (Liveness.Heartbeat, in process or through PUT
// /v1/component/{kind}/{server}/heartbeat) and nothing is logged for
// it. The log records only changes: a component registered, what it
// runs changed, it deregistered, or it went stale — missed its TTL and
// was deregistered by the leader.

// DefaultComponentTTL is how long a component may go without a
// heartbeat before the leader deregisters it: three launcher heartbeats.
const DefaultComponentTTL = 3 * DefaultHeartbeat

// LivenessConfig configures a Liveness.
type LivenessConfig struct {
	// Pipeline receives the deregistrations of stale components; required.
	Pipeline Submitter
	// State is read for the registered components; required.
	State State
	// Clock; default clock.System.
	Clock clock.Clock
	// TTL is how long a component may go without a heartbeat; default
	// DefaultComponentTTL. It starts afresh for every component when
	// this server starts leading.
	TTL time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the tracker's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultLivenessConfig returns the defaults, without the required fields.
func DefaultLivenessConfig() LivenessConfig {
	return LivenessConfig{Clock: clock.System{}, TTL: DefaultComponentTTL, Logger: slog.Default()}
}

// Validate reports a LivenessConfig that cannot work.
func (c LivenessConfig) Validate() error {
	if err := follow.Validate("launcher liveness", c.Pipeline, c.State, 0); err != nil {
		return err
	}
	if c.TTL < 0 {
		return errors.New("launcher liveness: TTL must not be negative")
	}
	return nil
}

// Liveness tracks the registered components' heartbeats while this
// server leads, and deregisters a component that misses its TTL. It is a
// leader-only processor (Run) and what heartbeats reach (Heartbeat).
type Liveness struct {
	cfg LivenessConfig
	log *slog.Logger
	mu  struct {
		sync.Mutex
		// seen holds each tracked component's last heartbeat (zero when
		// none since this server leads) and deadline, by id.
		seen map[string]*beat
		// running is set while Run tracks: only then does Liveness
		// answer (a server that stopped leading knows nothing current).
		running bool
	}
	stale   *prometheus.CounterVec
	tracked prometheus.Gauge
}

// beat is what the leader knows of one component's liveness.
type beat struct {
	last, deadline time.Time
}

// NewLiveness returns a Liveness; zero fields of cfg take their defaults.
func NewLiveness(cfg LivenessConfig) (*Liveness, error) {
	defaults.Fill(&cfg, DefaultLivenessConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Liveness{cfg: cfg, log: cfg.Logger,
		stale: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_component_stale_total",
			Help: "Components the leader deregistered because they missed their heartbeat TTL, by kind."}, []string{"kind"}),
		tracked: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_component_tracked",
			Help: "Registered components whose heartbeats the leader tracks."}),
	}
	l.mu.seen = map[string]*beat{}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(l.stale, l.tracked)
	}
	return l, nil
}

// Close unregisters the tracker's metrics.
func (l *Liveness) Close() {
	if l.cfg.Registerer != nil {
		l.cfg.Registerer.Unregister(l.stale)
		l.cfg.Registerer.Unregister(l.tracked)
	}
}

// Name implements supervisor.Processor.
func (l *Liveness) Name() string { return "component-liveness" }

// TTL is how long a component may go without a heartbeat.
func (l *Liveness) TTL() time.Duration { return l.cfg.TTL }

// Heartbeat records that the component kind/server is alive and returns
// the TTL within which it must heartbeat again. A component not
// registered (never, or deregistered as stale) gets a
// *commands.NotFoundError: it registers again. Nothing is logged.
func (l *Liveness) Heartbeat(kind, server string) (time.Duration, error) {
	id := events.Component{Kind: kind, Server: server}.ComponentID()
	snap := l.cfg.State.ReadSnapshot()
	_, err := launcher.GetComponent(projections.NewView(snap), id)
	snap.Close()
	if errors.Is(err, projections.ErrNotFound) {
		return 0, &commands.NotFoundError{Kind: "component", ID: id}
	} else if err != nil {
		return 0, fmt.Errorf("heartbeat of component %s: %w", id, err)
	}
	now := l.cfg.Clock.Now()
	l.mu.Lock()
	l.mu.seen[id] = &beat{last: now, deadline: now.Add(l.cfg.TTL)}
	l.mu.Unlock()
	return l.cfg.TTL, nil
}

// Liveness returns what the leader knows of component id: its last
// heartbeat (zero when none since this server leads), when it goes stale
// without one, and whether that is still ahead. ok is false for a
// component it does not track (not registered, or this server does not
// lead).
func (l *Liveness) Liveness(id string) (last, deadline time.Time, alive, ok bool) {
	now := l.cfg.Clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.mu.seen[id]
	if !ok || !l.mu.running {
		return time.Time{}, time.Time{}, false, false
	}
	return b.last, b.deadline, now.Before(b.deadline), true
}

// Run implements supervisor.Processor: while this server leads, it
// tracks every registered component — each starting with a fresh TTL,
// so no leadership change makes a live component stale — and
// deregisters those that miss it.
func (l *Liveness) Run(ctx context.Context) error {
	l.mu.Lock()
	l.mu.running = true
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		clear(l.mu.seen)
		l.mu.running = false
		l.mu.Unlock()
		l.tracked.Set(0)
	}()
	notify := l.cfg.State.Notifier()
	fresh := true
	for {
		ch := notify.Table(launcher.ComponentsTable)
		comps, err := l.components()
		if err != nil {
			return err
		}
		stale, next := l.sync(comps, fresh)
		fresh = false
		for _, c := range stale {
			l.deregister(ctx, c)
		}
		var fire <-chan time.Time
		var timer clock.Timer
		if !next.IsZero() {
			timer = l.cfg.Clock.NewTimer(next.Sub(l.cfg.Clock.Now()))
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-ch:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func (l *Liveness) components() ([]*launcher.Component, error) {
	snap := l.cfg.State.ReadSnapshot()
	defer snap.Close()
	cs, err := launcher.Components(projections.NewView(snap), "")
	if err != nil {
		return nil, fmt.Errorf("launcher liveness: read components: %w", err)
	}
	return cs, nil
}

// sync tracks exactly the registered components: one newly registered
// (or every one, when fresh) gets a full TTL. It returns those past
// their deadline and the next deadline.
func (l *Liveness) sync(comps []*launcher.Component, fresh bool) (stale []*launcher.Component, next time.Time) {
	now := l.cfg.Clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := map[string]bool{}
	for _, c := range comps {
		id := c.ComponentID()
		ids[id] = true
		b, ok := l.mu.seen[id]
		if !ok {
			b = &beat{}
			l.mu.seen[id] = b
		}
		if !ok || fresh {
			b.deadline = later(b.deadline, now.Add(l.cfg.TTL))
		}
		if !now.Before(b.deadline) {
			stale = append(stale, c)
			continue
		}
		if next.IsZero() || b.deadline.Before(next) {
			next = b.deadline
		}
	}
	for id := range l.mu.seen {
		if !ids[id] {
			delete(l.mu.seen, id)
		}
	}
	l.tracked.Set(float64(len(l.mu.seen)))
	sort.Slice(stale, func(i, j int) bool { return stale[i].ComponentID() < stale[j].ComponentID() })
	return stale, next
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// deregister removes a component that missed its TTL, as read: one that
// registered again meanwhile stays, with a fresh TTL. A failure is
// tried again after a while.
func (l *Liveness) deregister(ctx context.Context, c *launcher.Component) {
	id := c.ComponentID()
	var last time.Time
	l.mu.Lock()
	if b, ok := l.mu.seen[id]; ok {
		last = b.last
	}
	l.mu.Unlock()
	_, err := l.cfg.Pipeline.Run(ctx, "component.deregister", commands.Request{Actor: "system:component-liveness"},
		lcmd.DeregisterComponent{Kind: c.Kind, Server: c.Server, ModifyIndex: c.ModifyIndex})
	now := l.cfg.Clock.Now()
	switch {
	case err == nil:
		l.stale.WithLabelValues(c.Kind).Inc()
		l.log.Info("launcher: component missed its heartbeat TTL; deregistered", "component", id, "server", c.Server,
			"last_heartbeat", last, "ttl", l.cfg.TTL)
		l.mu.Lock()
		delete(l.mu.seen, id)
		l.mu.Unlock()
	case isConflict(err):
		l.extend(id, now.Add(l.cfg.TTL)) // registered again meanwhile
	default:
		if ctx.Err() == nil {
			l.log.Warn("launcher: cannot deregister a stale component; will retry", "component", id, "server", c.Server, "err", err)
		}
		l.extend(id, now.Add(min(l.cfg.TTL, 5*time.Second)))
	}
}

func (l *Liveness) extend(id string, deadline time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.mu.seen[id]; ok {
		b.deadline = later(b.deadline, deadline)
	}
}
