package gc

import (
	"context"
	"errors"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/processors/defaults"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands"
	cgc "github.com/ordoplane/ordo/commands/gc"
)

// Config configures a Processor.
type Config struct {
	// Pipeline runs the collections; required.
	Pipeline *commands.Pipeline
	// Thresholds are the periodic collection's; zero value: none (use
	// cgc.DefaultThresholds()).
	Thresholds cgc.Thresholds
	// Interval between collections; default 5m (Nomad's job_gc_interval).
	Interval time.Duration
	// Clock paces the runs; default clock.System. Ages are judged
	// from the pipeline's leader clock, not this one.
	Clock clock.Clock
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultInterval is the time between periodic collections.
const DefaultInterval = 5 * time.Minute

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Interval: DefaultInterval, Clock: clock.System{}, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.Pipeline == nil {
		return errors.New("gc: Pipeline is required")
	}
	if c.Interval < 0 {
		return errors.New("gc: Interval must not be negative")
	}
	return c.Thresholds.Validate()
}

// Processor runs periodic garbage collection while its server leads.
type Processor struct {
	cfg Config
	m   metrics
}

// New returns a Processor; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Processor, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Processor{cfg: cfg, m: newMetrics(cfg.Registerer)}, nil
}

// Name implements supervisor.Processor.
func (p *Processor) Name() string { return "gc" }

// Run implements supervisor.Processor: a collection every Interval until
// ctx ends.
func (p *Processor) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.cfg.Clock.After(p.cfg.Interval):
			p.Once(ctx)
		}
	}
}

// Once runs one collection to completion and records its metrics.
func (p *Processor) Once(ctx context.Context) cgc.Counts {
	start := p.cfg.Clock.Now()
	got, index, err := cgc.Run(ctx, p.cfg.Pipeline, "gc", cgc.Collect{Thresholds: p.cfg.Thresholds})
	p.m.observe(got, p.cfg.Clock.Now().Sub(start))
	if err != nil && ctx.Err() == nil {
		p.cfg.Logger.Warn("garbage collection failed", "err", err)
	}
	if got.Total() > 0 {
		p.cfg.Logger.Info("garbage collected", "index", index, "evals", got.Evals, "allocs", got.Allocs,
			"jobs", got.Jobs, "nodes", got.Nodes, "deployments", got.Deployments, "took", p.cfg.Clock.Now().Sub(start))
	}
	return got
}

type metrics struct {
	collected *prometheus.CounterVec
	seconds   prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		collected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_gc_collected_total",
			Help: "Objects removed by the periodic garbage collection, by kind."}, []string{"kind"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ordo_gc_run_seconds",
			Help: "Time of one periodic garbage collection.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.collected, m.seconds} {
			if err := reg.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if !errors.As(err, &are) {
					panic(err)
				}
			}
		}
	}
	return m
}

func (m metrics) observe(c cgc.Counts, d time.Duration) {
	m.seconds.Observe(d.Seconds())
	for kind, n := range map[string]int{"eval": c.Evals, "alloc": c.Allocs, "job": c.Jobs, "node": c.Nodes, "deployment": c.Deployments} {
		if n > 0 {
			m.collected.WithLabelValues(kind).Add(float64(n))
		}
	}
}
