package keyring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/keyring"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	kp "github.com/ordoplane/ordo/projections/keyring"
	pv "github.com/ordoplane/ordo/projections/variables"
	"github.com/ordoplane/ordo/storage/kv"
)

// RekeyerConfig configures a Rekeyer.
type RekeyerConfig struct {
	// Keyring decrypts with the old key and encrypts with the active one;
	// Pipeline runs the re-encrypting puts; Store and Notifier give state
	// and its changes. All required.
	Keyring  *keyring.Keyring
	Pipeline *commands.Pipeline
	Store    *kv.Store
	Notifier *projections.Notifier
	// PageSize is how many variables one page re-encrypts; default 512.
	PageSize int
	// Parallel is how many puts of a page are in flight; default 64.
	Parallel int
	// Retry is the wait after a failed page; default 1s.
	Retry time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives ordo_keyring_rekeyed_variables_total; nil registers none.
	Registerer prometheus.Registerer
}

// Rekeyer is the leader-only job of a full rotation (N12): for each key in
// the rekeying state, it re-encrypts the variables encrypted with it, a
// page at a time, each put carrying the variable's modify index (cas), and
// marks the key inactive when none is left. All progress is in the log, so
// a new leader resumes it.
type Rekeyer struct {
	cfg     RekeyerConfig
	rekeyed prometheus.Counter
}

// NewRekeyer returns a Rekeyer.
func NewRekeyer(cfg RekeyerConfig) (*Rekeyer, error) {
	if cfg.Keyring == nil || cfg.Pipeline == nil || cfg.Store == nil || cfg.Notifier == nil {
		return nil, errors.New("keyring: Keyring, Pipeline, Store and Notifier are required")
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 512
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 64
	}
	if cfg.Retry <= 0 {
		cfg.Retry = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Rekeyer{cfg: cfg, rekeyed: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ordo_keyring_rekeyed_variables_total", Help: "Variables a full rotation re-encrypted with the new key."})}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(r.rekeyed); err != nil {
			return nil, fmt.Errorf("rekey metrics: %w", err)
		}
	}
	return r, nil
}

// Name implements supervisor.Processor.
func (r *Rekeyer) Name() string { return "keyring-rekey" }

// Run implements supervisor.Processor.
func (r *Rekeyer) Run(ctx context.Context) error {
	for {
		changed := r.cfg.Notifier.Table(kp.Table)
		busy, err := r.Step(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var wait <-chan time.Time
		switch {
		case err != nil:
			r.cfg.Logger.Warn("keyring: rekey page failed; retrying", "err", err)
			wait = time.After(r.cfg.Retry)
		case busy:
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-wait:
		}
	}
}

// Step re-encrypts one page of the first rekeying key's variables, or
// marks that key inactive when it has none left. It reports whether there
// was a rekeying key.
func (r *Rekeyer) Step(ctx context.Context) (bool, error) {
	snap := r.cfg.Store.Snapshot()
	v := projections.NewView(snap)
	old, page, err := r.page(v)
	snap.Close()
	if err != nil || old == nil {
		return false, err
	}
	if len(page) == 0 {
		_, err := r.cfg.Pipeline.Run(ctx, "keyring.set_state", commands.Request{Actor: "system:rekey"},
			keyring.SetState{KeyID: old.KeyID, State: events.RootKeyInactive, ModifyIndex: old.ModifyIndex})
		if err != nil && commands.Status(err) != 409 {
			return true, fmt.Errorf("mark %s inactive: %w", old.KeyID, err)
		}
		r.cfg.Logger.Info("keyring: full rotation done; old key inactive", "key_id", old.KeyID)
		return true, nil
	}
	var (
		wg    sync.WaitGroup
		sem   = make(chan struct{}, r.cfg.Parallel)
		mu    sync.Mutex
		first error
	)
	for _, x := range page {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := r.rekey(ctx, x); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return true, first
}

func (r *Rekeyer) page(v projections.View) (*kp.Key, []*pv.Variable, error) {
	keys, err := kp.List(v)
	if err != nil {
		return nil, nil, err
	}
	var old *kp.Key
	for _, k := range keys {
		if k.State == events.RootKeyRekeying {
			old = k
			break
		}
	}
	if old == nil {
		return nil, nil, nil
	}
	var page []*pv.Variable
	errFull := errors.New("page full")
	err = pv.ByKey(v, old.KeyID, func(ns, path string) error {
		x, err := pv.Get(v, ns, path)
		if err != nil {
			return err
		}
		page = append(page, x)
		if len(page) == r.cfg.PageSize {
			return errFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, nil, err
	}
	return old, page, nil
}

// rekey re-encrypts one variable; a put losing its cas to a concurrent
// write is fine (that write encrypted with the active key, or the next
// page retries it).
func (r *Rekeyer) rekey(ctx context.Context, x *pv.Variable) error {
	items, err := variables.Open(r.cfg.Keyring, x.Namespace, x.Path, x.KeyID, x.Data)
	if err != nil {
		return err
	}
	keyID, data, err := variables.Seal(r.cfg.Keyring, x.Namespace, x.Path, items)
	clear(items)
	if err != nil {
		return err
	}
	cas := x.ModifyIndex
	_, err = r.cfg.Pipeline.Run(ctx, "keyring.rekey_variable", commands.Request{Actor: "system:rekey"},
		variables.Put{Namespace: x.Namespace, Path: x.Path, CAS: &cas, KeyID: keyID, Data: data})
	if variables.IsCASConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("re-encrypt %s/%s: %w", x.Namespace, x.Path, err)
	}
	r.rekeyed.Inc()
	return nil
}
