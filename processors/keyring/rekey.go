package keyring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/keyring"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/processors/follow"
	"github.com/ordoplane/ordo/projections"
	kp "github.com/ordoplane/ordo/projections/keyring"
	pv "github.com/ordoplane/ordo/projections/variables"
)

// RekeyerConfig configures a Rekeyer.
type RekeyerConfig struct {
	// Keyring decrypts with the old key and encrypts with the active one;
	// Pipeline runs the re-encrypting puts; Store and Notifier give state
	// and its changes. All required.
	Keyring  *keyring.Keyring
	Pipeline *commands.Pipeline
	Store    follow.Snapshotter
	Notifier *projections.Notifier
	// PageSize is how many variables one page re-encrypts; default 4096.
	PageSize int
	// Batch is how many re-encrypted variables one entry carries
	// (variables.Rekey); default 256, at most variables.MaxRekeyPuts.
	Batch int
	// Parallel is how many entries of a page are in flight; default 4.
	Parallel int
	// Retry is the wait after a failed page; default 1s.
	Retry time.Duration
	// Clock paces the retries; default clock.System.
	Clock clock.Clock
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
	// cursor is where the next page of a rekeying key starts: after the
	// variable Key(namespace, path) that ended the last one. A variable
	// left behind it (its put lost a race and the write's key was not the
	// active one) is found by the pass from the start that must find
	// nothing before the key is marked inactive.
	cursor struct{ keyID, after string }
}

// DefaultRekeyerConfig returns the defaults, without the required fields.
func DefaultRekeyerConfig() RekeyerConfig {
	return RekeyerConfig{PageSize: 4096, Batch: 256, Parallel: 4, Retry: time.Second, Clock: clock.System{},
		Logger: slog.Default()}
}

// Validate reports a RekeyerConfig that cannot work.
func (c RekeyerConfig) Validate() error {
	switch {
	case c.Keyring == nil || c.Pipeline == nil || c.Store == nil || c.Notifier == nil:
		return errors.New("keyring: Keyring, Pipeline, Store and Notifier are required")
	case c.PageSize < 0 || c.Batch < 0 || c.Parallel < 0 || c.Retry < 0:
		return errors.New("keyring: PageSize, Batch, Parallel and Retry must not be negative")
	}
	return nil
}

// NewRekeyer returns a Rekeyer.
func NewRekeyer(cfg RekeyerConfig) (*Rekeyer, error) {
	defaults.Fill(&cfg, DefaultRekeyerConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Batch = min(cfg.Batch, variables.MaxRekeyPuts)
	r := &Rekeyer{cfg: cfg, rekeyed: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ordo_keyring_rekeyed_variables_total", Help: "Variables a full rotation re-encrypted with the new key (a variable written concurrently, whose write won, may be counted)."})}
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
			wait = r.cfg.Clock.After(r.cfg.Retry)
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

// Step re-encrypts one page of the first rekeying key's variables (pages
// follow each other through the key's index), or marks that key inactive
// when a pass from the start finds none left. It reports whether there
// was a rekeying key. Step is called by one goroutine at a time.
func (r *Rekeyer) Step(ctx context.Context) (bool, error) {
	snap := r.cfg.Store.Snapshot()
	v := projections.NewView(snap)
	old, page, err := r.page(v)
	snap.Close()
	if err != nil || old == nil {
		return false, err
	}
	if len(page) == 0 && r.cursor.after != "" {
		r.cursor.after = "" // one more pass from the start before done
		return true, nil
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
	pin, err := r.cfg.Keyring.Pin()
	if err != nil {
		return true, err
	}
	last := page[len(page)-1]
	r.cursor.after = pv.Key(last.Namespace, last.Path)
	var (
		wg    sync.WaitGroup
		sem   = make(chan struct{}, r.cfg.Parallel)
		mu    sync.Mutex
		first error
	)
	for len(page) > 0 {
		batch := page[:min(r.cfg.Batch, len(page))]
		page = page[len(batch):]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := r.rekeyBatch(ctx, pin, batch); err != nil {
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
	if r.cursor.keyID != old.KeyID {
		r.cursor.keyID, r.cursor.after = old.KeyID, ""
	}
	var page []*pv.Variable
	errFull := errors.New("page full")
	err = pv.ByKeyAfter(v, old.KeyID, r.cursor.after, func(ns, path string) error {
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

// rekeyBatch re-encrypts a batch of variables with the pinned key in one
// entry (variables.Rekey), each put carrying the modify index it read
// (cas). A variable written since is dropped at decide; when a write lands
// between decide and apply, the entry is refused as a whole and the batch
// goes again one put an entry, so the others still progress. A rotation
// since the pin refuses the batch: the error makes the page go again with
// the new active key.
func (r *Rekeyer) rekeyBatch(ctx context.Context, pin *keyring.Pinned, batch []*pv.Variable) error {
	puts := make([]variables.Put, 0, len(batch))
	for _, x := range batch {
		p, err := seal(pin, x)
		if err != nil {
			return err
		}
		puts = append(puts, p)
	}
	err := r.submit(ctx, pin, puts)
	if variables.IsCASConflict(err) {
		for _, p := range puts {
			if err := r.submit(ctx, pin, []variables.Put{p}); err != nil && !variables.IsCASConflict(err) {
				return err
			}
		}
		return nil
	}
	return err
}

// submit proposes puts as one variables.Rekey.
func (r *Rekeyer) submit(ctx context.Context, pin *keyring.Pinned, puts []variables.Put) error {
	_, err := r.cfg.Pipeline.Run(ctx, "keyring.rekey_variables", commands.Request{Actor: "system:rekey"},
		variables.Rekey{Puts: puts, KeyID: pin.KeyID, KeyModifyIndex: pin.ModifyIndex})
	if err != nil {
		return fmt.Errorf("re-encrypt %d variables from %s/%s: %w", len(puts), puts[0].Namespace, puts[0].Path, err)
	}
	r.rekeyed.Add(float64(len(puts)))
	return nil
}

// seal re-encrypts one variable with the pinned key into a put carrying
// the modify index it was read at.
func seal(pin *keyring.Pinned, x *pv.Variable) (variables.Put, error) {
	items, err := variables.Open(pin, x.Namespace, x.Path, x.KeyID, x.Data)
	if err != nil {
		return variables.Put{}, err
	}
	keyID, data, err := variables.Seal(pin, x.Namespace, x.Path, items)
	clear(items)
	if err != nil {
		return variables.Put{}, err
	}
	cas := x.ModifyIndex
	return variables.Put{Namespace: x.Namespace, Path: x.Path, CAS: &cas, KeyID: keyID, Data: data}, nil
}
