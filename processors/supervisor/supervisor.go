package supervisor

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/processors/defaults"
)

// Processor is a leader-only background task.
type Processor interface {
	// Name identifies the processor in logs and metrics.
	Name() string
	// Run works until ctx is cancelled; it returns ctx.Err() or nil then.
	Run(ctx context.Context) error
}

// Supervisor runs processors while this server leads.
type Supervisor struct {
	procs   []Processor
	log     *slog.Logger
	backoff time.Duration
	clock   clock.Clock
	leader  prometheus.Gauge
	reg     prometheus.Registerer
	// restart carries Restart's requests to Run.
	restart chan struct{}
}

// Config configures a Supervisor.
type Config struct {
	// Logger; default slog.Default().
	Logger *slog.Logger
	// RestartBackoff is the wait before restarting a failed processor; default 1s.
	RestartBackoff time.Duration
	// Clock paces the restarts; default clock.System.
	Clock clock.Clock
	// Registerer receives the leadership gauge; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Logger: slog.Default(), RestartBackoff: time.Second, Clock: clock.System{}}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.RestartBackoff < 0 {
		return errors.New("supervisor: RestartBackoff must not be negative")
	}
	return nil
}

// New returns a Supervisor of procs; zero fields of cfg take
// DefaultConfig's values.
func New(cfg Config, procs ...Processor) (*Supervisor, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Supervisor{procs: procs, log: cfg.Logger, backoff: cfg.RestartBackoff, clock: cfg.Clock, reg: cfg.Registerer, restart: make(chan struct{}, 1),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_raft_leader", Help: "1 while this server is the raft leader."})}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(s.leader)
	}
	return s, nil
}

// Run follows leadership changes until ctx ends.
func (s *Supervisor) Run(ctx context.Context, changes <-chan bool) error {
	defer func() {
		if s.reg != nil {
			s.reg.Unregister(s.leader)
		}
	}()
	var stop func()
	for {
		select {
		case <-ctx.Done():
			if stop != nil {
				stop()
			}
			return nil
		case <-s.restart:
			if stop != nil {
				s.log.Info("restarting processors: the state they started from was replaced", "processors", len(s.procs))
				stop()
				stop = s.start(ctx)
			}
		case leading := <-changes:
			if leading && stop == nil {
				select {
				case <-s.restart: // moot: they start from the state as it is now
				default:
				}
				s.log.Info("leadership gained: starting processors", "processors", len(s.procs))
				s.leader.Set(1)
				stop = s.start(ctx)
			} else if !leading && stop != nil {
				s.log.Info("leadership lost: stopping processors")
				s.leader.Set(0)
				stop()
				stop = nil
			}
		}
	}
}

// Restart stops the running processors and starts them again, so that
// they rebuild what they hold in memory from the state as it is now (a
// snapshot restore replaced it); it does nothing while this server does
// not lead. It returns at once; Run restarts them.
func (s *Supervisor) Restart() {
	select {
	case s.restart <- struct{}{}:
	default: // one is pending already
	}
}

// start runs every processor and returns a function that stops and joins them.
func (s *Supervisor) start(parent context.Context) func() {
	ctx, cancel := context.WithCancel(parent)
	var wg sync.WaitGroup
	for _, p := range s.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.keepRunning(ctx, p)
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

func (s *Supervisor) keepRunning(ctx context.Context, p Processor) {
	for {
		err := p.Run(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			s.log.Error("processor failed; restarting", "processor", p.Name(), "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(s.backoff):
		}
	}
}
