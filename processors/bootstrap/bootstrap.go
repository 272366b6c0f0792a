package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/commands/server"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// Peer is a server with the addresses it is reached at.
type Peer struct {
	ID, RaftAddr, HTTPAddr string
}

// Processor runs once per leadership term and then idles.
type Processor struct {
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
	logger := p.Logger
	if logger == nil {
		logger = slog.Default()
	}
	retry := p.Retry
	if retry <= 0 {
		retry = 500 * time.Millisecond
	}
	for {
		err := p.once(ctx)
		if err == nil {
			break
		}
		logger.Warn("leader bootstrap failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retry):
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (p *Processor) once(ctx context.Context) error {
	peers, err := p.Peers()
	if err != nil {
		return fmt.Errorf("list peers: %w", err)
	}
	req := commands.Request{Actor: "system:leader"}
	for _, s := range peers {
		if _, err := p.Pipeline.Run(ctx, "server.register", req, server.Register{ID: s.ID, RaftAddr: s.RaftAddr, HTTPAddr: s.HTTPAddr}); err != nil {
			return err
		}
	}
	if p.Keyring != nil {
		if _, err := p.Keyring.Initialize(ctx); err != nil {
			return fmt.Errorf("first root key: %w", err)
		}
	}
	def := namespace.Apply{Name: namespaces.Default, Description: "Default shared namespace", IfAbsent: true}
	if _, err := p.Pipeline.Run(ctx, "namespace.apply", req, def); err != nil {
		return err
	}
	return nil
}
