package tokenexpiry

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/processors/defaults"
)

// Submitter runs commands; *commands.Pipeline implements it.
type Submitter interface {
	Run(ctx context.Context, name string, req commands.Request, c commands.Command) (commands.Outcome, error)
}

var _ Submitter = (*commands.Pipeline)(nil)

// Actor is the actor the processor's commands record.
const Actor = "processor:tokenexpiry"

// Config configures a Processor.
type Config struct {
	// Pipeline receives the ExpireTokens commands; required.
	Pipeline Submitter
	// Interval between sweeps; default 5s.
	Interval time.Duration
	// Clock paces the sweeps; default clock.System.
	Clock clock.Clock
	// Batch bounds the tokens one entry deletes; default 1000.
	Batch int
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Processor deletes expired tokens while this server leads.
type Processor struct {
	cfg     Config
	sweeps  *prometheus.CounterVec
	expired prometheus.Counter
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Interval: 5 * time.Second, Clock: clock.System{}, Batch: 1000, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Pipeline == nil:
		return errors.New("tokenexpiry: Pipeline is required")
	case c.Interval < 0 || c.Batch < 0:
		return errors.New("tokenexpiry: Interval and Batch must not be negative")
	}
	return nil
}

// New returns a Processor.
func New(cfg Config) (*Processor, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Processor{cfg: cfg,
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_acl_token_expiry_sweeps_total",
			Help: "Sweeps for expired ACL tokens, by result (none, deleted, error)."}, []string{"result"}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_acl_tokens_expired_total",
			Help: "Expired ACL tokens listed for deletion by the expiry processor."}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{p.sweeps, p.expired} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// Name implements supervisor.Processor.
func (p *Processor) Name() string { return "tokenexpiry" }

// Run sweeps until ctx is cancelled.
func (p *Processor) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.cfg.Clock.After(p.cfg.Interval):
		}
		p.Sweep(ctx)
	}
}

// Sweep submits ExpireTokens commands until one finds fewer expired
// tokens than a batch, and returns how many tokens were listed for deletion.
func (p *Processor) Sweep(ctx context.Context) int {
	total := 0
	for {
		cmd := &acl.ExpireTokens{Limit: p.cfg.Batch}
		out, err := p.cfg.Pipeline.Run(ctx, "acl.token.expire", commands.Request{Actor: Actor}, cmd)
		if err != nil {
			if ctx.Err() == nil {
				p.sweeps.WithLabelValues("error").Inc()
				p.cfg.Logger.Warn("expire ACL tokens", "err", err)
			}
			return total
		}
		n := cmd.Result()
		if n > 0 {
			p.expired.Add(float64(n))
			p.cfg.Logger.Info("expired ACL tokens deleted", "tokens", n, "index", out.Index)
		}
		total += n
		if n < p.cfg.Batch {
			break
		}
	}
	if total > 0 {
		p.sweeps.WithLabelValues("deleted").Inc()
	} else {
		p.sweeps.WithLabelValues("none").Inc()
	}
	return total
}
