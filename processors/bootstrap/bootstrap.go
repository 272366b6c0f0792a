package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/commands/server"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// Peer is a server with the addresses it is reached at.
type Peer struct {
	ID, RaftAddr, HTTPAddr string
}

// Config configures a Processor.
type Config struct {
	// Pipeline runs the commands; required.
	Pipeline *commands.Pipeline
	// Peers returns the known servers that are in the raft configuration,
	// this one included; required.
	Peers func() ([]Peer, error)
	// Keyring, when set, makes the cluster's first root key before the
	// default namespace is written, so a cluster that has its default
	// namespace has an active key (variables and workload identities
	// need one).
	Keyring Initializer
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Retry is the wait between failed attempts; default 500ms.
	Retry time.Duration
	// Clock paces the retries; default clock.System.
	Clock clock.Clock
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Logger: slog.Default(), Retry: 500 * time.Millisecond, Clock: clock.System{}}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Pipeline == nil || c.Peers == nil:
		return errors.New("bootstrap: Pipeline and Peers are required")
	case c.Retry < 0:
		return errors.New("bootstrap: Retry must not be negative")
	}
	return nil
}

// Processor runs once per leadership term and then idles.
type Processor struct {
	cfg Config
}

// New returns a Processor; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Processor, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Processor{cfg: cfg}, nil
}

// Initializer makes the first root key unless there is an active one;
// *keyring.Keyring (commands/keyring) implements it.
type Initializer interface {
	Initialize(ctx context.Context) (keyID string, err error)
}

// Name implements supervisor.Processor.
func (p *Processor) Name() string { return "bootstrap" }

// Run implements supervisor.Processor.
func (p *Processor) Run(ctx context.Context) error {
	for {
		err := p.once(ctx)
		if err == nil {
			break
		}
		p.cfg.Logger.Warn("leader bootstrap failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.cfg.Clock.After(p.cfg.Retry):
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (p *Processor) once(ctx context.Context) error {
	peers, err := p.cfg.Peers()
	if err != nil {
		return fmt.Errorf("list peers: %w", err)
	}
	req := commands.Request{Actor: "system:leader"}
	for _, s := range peers {
		if _, err := p.cfg.Pipeline.Run(ctx, "server.register", req, server.Register{ID: s.ID, RaftAddr: s.RaftAddr, HTTPAddr: s.HTTPAddr}); err != nil {
			return err
		}
	}
	if p.cfg.Keyring != nil {
		if _, err := p.cfg.Keyring.Initialize(ctx); err != nil {
			return fmt.Errorf("first root key: %w", err)
		}
	}
	def := namespace.Apply{Name: namespaces.Default, Description: "Default shared namespace", IfAbsent: true}
	if _, err := p.cfg.Pipeline.Run(ctx, "namespace.apply", req, def); err != nil {
		return err
	}
	return nil
}
