package keyring

import (
	"context"
	"log/slog"
	"time"

	"github.com/ordoplane/ordo/commands/keyring"
)

// Initializer is the leader-only processor that creates the cluster's
// first root key when the cluster first elects a leader (and on any later
// leader that finds no active key).
type Initializer struct {
	// Keyring creates the key; required.
	Keyring *keyring.Keyring
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Retry is the wait between failed attempts; default 500ms.
	Retry time.Duration
}

// Name implements supervisor.Processor.
func (p *Initializer) Name() string { return "keyring-init" }

// Run implements supervisor.Processor.
func (p *Initializer) Run(ctx context.Context) error {
	logger := p.Logger
	if logger == nil {
		logger = slog.Default()
	}
	retry := p.Retry
	if retry <= 0 {
		retry = 500 * time.Millisecond
	}
	for {
		id, err := p.Keyring.Initialize(ctx)
		if err == nil {
			logger.Debug("keyring: active root key", "key_id", id)
			break
		}
		logger.Warn("keyring: creating the first root key failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retry):
		}
	}
	<-ctx.Done()
	return ctx.Err()
}
