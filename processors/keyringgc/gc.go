package keyringgc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/keyring"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/processors/follow"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	kp "github.com/ordoplane/ordo/projections/keyring"
)

// Config configures a GC.
type Config struct {
	// Pipeline runs the deletes; Store is read; both required.
	Pipeline *commands.Pipeline
	Store    follow.Snapshotter
	// Interval is the time between passes; default 10m.
	Interval time.Duration
	// Threshold is how old (since its creation, leader clock) an inactive
	// key must be to be collected; default 1h. Zero takes the default; a
	// negative value collects at any age.
	Threshold time.Duration
	// Clock gives the time key ages are judged at and paces the passes;
	// default clock.System.
	Clock clock.Clock
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives ordo_keyring_gc_keys_removed_total; nil registers none.
	Registerer prometheus.Registerer
}

// GC collects unused root keys.
type GC struct {
	cfg     Config
	removed prometheus.Counter
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Interval: 10 * time.Minute, Threshold: time.Hour, Clock: clock.System{}, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Pipeline == nil || c.Store == nil:
		return errors.New("keyringgc: Pipeline and Store are required")
	case c.Interval < 0:
		return errors.New("keyringgc: Interval must not be negative")
	}
	return nil
}

// New returns a GC.
func New(cfg Config) (*GC, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &GC{cfg: cfg, removed: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ordo_keyring_gc_keys_removed_total", Help: "Root keys the keyring GC removed."})}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(g.removed); err != nil {
			return nil, fmt.Errorf("keyringgc metrics: %w", err)
		}
	}
	return g, nil
}

// Name implements supervisor.Processor.
func (g *GC) Name() string { return "keyring-gc" }

// Run implements supervisor.Processor: a pass every Interval.
func (g *GC) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-g.cfg.Clock.After(g.cfg.Interval):
		}
		if _, err := g.Collect(ctx); err != nil && ctx.Err() == nil {
			g.cfg.Logger.Warn("keyring gc pass failed", "err", err)
		}
	}
}

// Collect runs one pass now and returns the ids of the keys it removed.
func (g *GC) Collect(ctx context.Context) ([]string, error) {
	snap := g.cfg.Store.Snapshot()
	v := projections.NewView(snap)
	cands, err := candidates(v, g.cfg.Clock.Now(), g.cfg.Threshold)
	snap.Close()
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, id := range cands {
		out, err := g.cfg.Pipeline.Run(ctx, "keyring.gc", commands.Request{Actor: "system:keyring-gc"},
			keyring.Remove{KeyID: id, CollectOnly: true})
		if err != nil {
			if commands.Status(err) == 409 || commands.Status(err) == 404 {
				continue // an allocation was signed with it meanwhile, or it went
			}
			errs = append(errs, fmt.Errorf("collect %s: %w", id, err))
			continue
		}
		snap := g.cfg.Store.Snapshot()
		_, gone := kp.Get(projections.NewView(snap), id)
		snap.Close()
		if errors.Is(gone, projections.ErrNotFound) {
			g.removed.Inc()
			removed = append(removed, id)
			g.cfg.Logger.Info("keyring gc: root key removed", "key_id", id, "index", out.Index)
		}
	}
	return removed, errors.Join(errs...)
}

// candidates returns the keys a pass may collect: inactive, older than
// threshold, signing no live allocation.
func candidates(v projections.View, now time.Time, threshold time.Duration) ([]string, error) {
	keys, err := kp.List(v)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		if k.State != events.RootKeyInactive {
			continue
		}
		if threshold > 0 && now.Sub(time.Unix(0, k.CreateTime)) < threshold {
			continue
		}
		n, _, err := allocs.LiveSignedBy(v, k.KeyID)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			out = append(out, k.KeyID)
		}
	}
	return out, nil
}
