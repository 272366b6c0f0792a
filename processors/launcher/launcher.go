package launcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/processors/follow"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// State is what the launcher reads (package follow).
type State = follow.State

// Submitter runs the launcher's commands: one on its own (Run), or the
// decisions of one runner pass together (RunGroup: one entry, each
// command checked at apply after the ones before it and answered on its
// own). *commands.Pipeline implements it.
type Submitter interface {
	follow.Submitter
	RunGroup(ctx context.Context, cmds []commands.Grouped) ([]commands.Outcome, []error)
}

var _ Submitter = (*commands.Pipeline)(nil)

// Factory builds the driver of one provider generation.
type Factory func(cfg events.ProviderConfig) (driver.Driver, error)

// Config configures a Launcher.
type Config struct {
	// Pipeline receives the launcher's commands; required.
	Pipeline Submitter
	// State is read for providers, requests and instances; required.
	State State
	// Drivers maps a driver name to its factory; required.
	Drivers map[string]Factory
	// Clock paces machines and retries; default the system clock.
	Clock clock.Clock
	// PollInterval is how often a runner with machines in flight, or
	// paused, looks again without a state change; default 1s.
	PollInterval time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the launcher's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Server names this server in the launcher's component (P10);
	// default DefaultServer.
	Server string
	// Heartbeat is how often the launcher reports its component alive to
	// Liveness; default DefaultHeartbeat.
	Heartbeat time.Duration
	// Liveness receives the component's heartbeats: the leader's
	// *Liveness in process, or an HTTPBeater from another server; nil
	// sends none.
	Liveness Beater
}

// DefaultHeartbeat is Config.Heartbeat's default.
const DefaultHeartbeat = 30 * time.Second

// DefaultServer is Config.Server's default.
const DefaultServer = "server"

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if err := follow.Validate("launcher", c.Pipeline, c.State, 0); err != nil {
		return err
	}
	switch {
	case len(c.Drivers) == 0:
		return errors.New("launcher: Drivers is required")
	case c.PollInterval < 0:
		return errors.New("launcher: PollInterval must not be negative")
	case c.Heartbeat < 0:
		return errors.New("launcher: Heartbeat must not be negative")
	}
	return nil
}

// Launcher runs one runner per provider generation while this server leads.
type Launcher struct {
	cfg Config
	log *slog.Logger
	m   *metrics
	// runners counts running runners (tests and the benchmark read it).
	runners atomic.Int64
}

// New returns a Launcher; zero fields of cfg take their defaults.
func New(cfg Config) (*Launcher, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Launcher{cfg: cfg, log: cfg.Logger, m: newMetrics(cfg.Registerer)}, nil
}

// Close unregisters the launcher's metrics.
func (l *Launcher) Close() { l.m.unregister(l.cfg.Registerer) }

// Name implements supervisor.Processor.
func (l *Launcher) Name() string { return "launcher" }

// Runners returns how many provider runners are running.
func (l *Launcher) Runners() int { return int(l.runners.Load()) }

// generation is a running runner.
type generation struct {
	index  uint64
	cfg    events.ProviderConfig
	cancel context.CancelFunc
	done   chan struct{}
}

// Run implements supervisor.Processor: it keeps one runner per provider
// at its current generation until ctx ends, then joins them.
func (l *Launcher) Run(ctx context.Context) error {
	running := map[string]*generation{}
	var wg sync.WaitGroup
	comp := &component{l: l}
	defer func() {
		for _, g := range running {
			g.cancel()
		}
		wg.Wait()
		comp.deregister(ctx) // P10: its pools are gone
	}()
	notify := l.cfg.State.Notifier()
	hb := l.cfg.Clock.After(l.cfg.Heartbeat)
	for {
		ch := notify.Table(launcher.ProvidersTable)
		provs, err := l.providers()
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, p := range provs {
			name := p.Config.Name
			seen[name] = true
			if g, ok := running[name]; ok && g.index == p.ConfigIndex {
				continue
			}
			if g, ok := running[name]; ok {
				// P6: the old generation goes idle before the new one starts.
				g.cancel()
				<-g.done
				delete(running, name)
			}
			f, ok := l.cfg.Drivers[p.Config.Driver]
			if !ok {
				l.log.Warn("launcher: provider names an unknown driver", "provider", name, "driver", p.Config.Driver)
				continue
			}
			d, err := f(p.Config)
			if err != nil {
				l.log.Warn("launcher: cannot build driver", "provider", name, "err", err)
				continue
			}
			rctx, cancel := context.WithCancel(ctx)
			g := &generation{index: p.ConfigIndex, cfg: p.Config, cancel: cancel, done: make(chan struct{})}
			running[name] = g
			r := newRunner(l, name, p.ConfigIndex, d)
			wg.Add(1)
			l.runners.Add(1)
			go func() {
				defer wg.Done()
				defer close(g.done)
				defer l.runners.Add(-1)
				if err := r.run(rctx); err != nil && !errors.Is(err, context.Canceled) {
					l.log.Error("launcher: runner stopped", "provider", name, "err", err)
				}
			}()
		}
		for name, g := range running {
			if !seen[name] {
				g.cancel()
				<-g.done
				delete(running, name)
			}
		}
		comp.register(ctx, pools(running))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-hb:
			comp.beat(ctx)
			hb = l.cfg.Clock.After(l.cfg.Heartbeat)
		}
	}
}

func (l *Launcher) providers() ([]*launcher.Provider, error) {
	snap := l.cfg.State.ReadSnapshot()
	defer snap.Close()
	ps, err := launcher.Providers(projections.NewView(snap))
	if err != nil {
		return nil, fmt.Errorf("launcher: read providers: %w", err)
	}
	return ps, nil
}

// metrics are the launcher's Prometheus metrics.
type metrics struct {
	decisions *prometheus.CounterVec
	machines  *prometheus.GaugeVec
	pass      prometheus.Histogram
	group     prometheus.Histogram
	open      *prometheus.GaugeVec
	pools     prometheus.Gauge
	rereads   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_launcher_decisions_total",
			Help: "Launcher decisions on node requests and instances, by provider and outcome."}, []string{"provider", "outcome"}),
		machines: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ordo_launcher_machines",
			Help: "Driver state machines in flight, by provider and kind (create, delete)."}, []string{"provider", "kind"}),
		pass: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ordo_launcher_pass_seconds",
			Help: "Time of one runner pass (read, decide, act).", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		group: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ordo_launcher_group_commands",
			Help: "Commands a runner submitted together as one log entry.", Buckets: prometheus.ExponentialBuckets(1, 2, 12)}),
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ordo_launcher_open_requests",
			Help: "Open node requests as a provider's runner last saw them, by provider and state."}, []string{"provider", "state"}),
		pools: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_launcher_pools",
			Help: "Pools this server's launcher runs and has registered as its component."}),
		rereads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_launcher_requests_reread_total",
			Help: "Node requests a provider's runner re-read to keep its view of the open requests current (loads included)."},
			[]string{"provider"}),
	}
	if reg != nil {
		reg.MustRegister(m.decisions, m.machines, m.pass, m.group, m.open, m.pools, m.rereads)
	}
	return m
}

func (m *metrics) unregister(reg prometheus.Registerer) {
	if reg == nil {
		return
	}
	reg.Unregister(m.decisions)
	reg.Unregister(m.machines)
	reg.Unregister(m.pass)
	reg.Unregister(m.group)
	reg.Unregister(m.open)
	reg.Unregister(m.pools)
	reg.Unregister(m.rereads)
}
