package deploywatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/order"
	"github.com/ordoplane/ordo/storage/kv"
)

// Submitter runs commands; *commands.Pipeline implements it.
type Submitter interface {
	Run(ctx context.Context, name string, req commands.Request, c commands.Command) (commands.Outcome, error)
}

var _ Submitter = (*commands.Pipeline)(nil)

// State is where the watcher reads deployments; *projections.FSM implements it.
type State interface {
	Store() *kv.Store
	Notifier() *projections.Notifier
}

var _ State = (*projections.FSM)(nil)

// Config configures a Watcher.
type Config struct {
	// Pipeline receives the status updates; required.
	Pipeline Submitter
	// State is read for deployments; required.
	State State
	// RetryInterval is the wait before a failed move is tried again;
	// default 1s.
	RetryInterval time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Pipeline == nil:
		return errors.New("deploywatch: Pipeline is required")
	case c.State == nil:
		return errors.New("deploywatch: State is required")
	case c.RetryInterval < 0:
		return errors.New("deploywatch: RetryInterval must not be negative")
	}
	return nil
}

// Watcher moves initializing deployments to pending while this server leads.
type Watcher struct {
	cfg Config
	log *slog.Logger
}

// New returns a Watcher.
func New(cfg Config) (*Watcher, error) {
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Watcher{cfg: cfg, log: cfg.Logger}, nil
}

// Name implements supervisor.Processor.
func (w *Watcher) Name() string { return "deploywatch" }

// actor names the watcher in the entries it appends.
const actor = "system:deploywatch"

// Run implements supervisor.Processor: it moves initializing deployments
// until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	var (
		from  string          // order key to resume the scan at
		retry map[string]bool // ids whose move failed
	)
	retry = map[string]bool{}
	notify := w.cfg.State.Notifier()
	for {
		// Take the watch channel before reading, so no change is missed.
		changed := notify.Table(deployments.Table)
		found, next, err := w.initializing(from)
		if err != nil {
			return err
		}
		from = next
		for id := range retry {
			found = append(found, id)
		}
		clear(retry)
		sort.Strings(found)
		for i, id := range found {
			if i > 0 && found[i-1] == id {
				continue
			}
			if err := w.move(ctx, id); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				w.log.Warn("moving deployment to pending failed; will retry", "deployment", id, "err", err)
				retry[id] = true
			}
		}
		var (
			timer *time.Timer
			again <-chan time.Time
		)
		if len(retry) > 0 {
			timer = time.NewTimer(w.cfg.RetryInterval)
			again = timer.C
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-again:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// initializing returns the ids of the initializing deployments created at
// or after order key from ("" for all), and the key to resume at next.
func (w *Watcher) initializing(from string) ([]string, string, error) {
	snap := w.cfg.State.Store().Snapshot()
	defer snap.Close()
	var ids []string
	next := from
	err := deployments.Scan(projections.NewView(snap), deployments.Query{From: from}, func(d *deployments.Deployment) error {
		key := order.Key(d.CreateIndex, d.ID)
		if key == from {
			return nil // seen by the previous scan
		}
		next = key
		if d.Status == events.DeploymentStatusInitializing {
			ids = append(ids, d.ID)
		}
		return nil
	})
	if err != nil {
		return nil, from, fmt.Errorf("deploywatch: scan deployments: %w", err)
	}
	return ids, next, nil
}

// maxAttempts bounds how often a move is decided again after its decision
// went stale.
const maxAttempts = 3

// move moves deployment id to pending. A deployment gone or no longer
// initializing needs nothing.
func (w *Watcher) move(ctx context.Context, id string) error {
	req := commands.Request{Actor: actor}
	for attempt := 1; ; attempt++ {
		_, err := w.cfg.Pipeline.Run(ctx, "deployment.pending", req, job.MarkDeploymentPending{ID: id})
		var (
			nf *commands.NotFoundError
			ce *commands.ConflictError
		)
		switch {
		case err == nil:
			w.log.Debug("deployment pending", "deployment", id)
			return nil
		case errors.As(err, &nf):
			return nil
		case errors.As(err, &ce) && attempt < maxAttempts:
			continue
		}
		return err
	}
}
