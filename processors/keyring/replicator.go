package keyring

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/processors/follow"
	"github.com/ordoplane/ordo/projections"
	kp "github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/keystore"
)

// Fetcher fetches key id's material from the server at httpAddr.
type Fetcher func(ctx context.Context, httpAddr, id string) (*keystore.Key, error)

// ReplicatorConfig configures a Replicator.
type ReplicatorConfig struct {
	// Self is this server's id; required.
	Self string
	// Keystore is this server's keystore; required.
	Keystore *keystore.Store
	// Store and Notifier give the log's key metadata and its changes; required.
	Store    follow.Snapshotter
	Notifier *projections.Notifier
	// Fetch fetches from a peer; default HTTPFetcher(Self, "", nil).
	Fetch Fetcher
	// MinBackoff and MaxBackoff bound the wait after a round that left a
	// key missing; default 250ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// Clock paces the retries; default clock.System.
	Clock clock.Clock
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives ordo_keyring_keys_missing and
	// ordo_keyring_fetch_errors_total; nil registers none.
	Registerer prometheus.Registerer
}

// Replicator keeps this server's keystore in step with the log (N5).
type Replicator struct {
	cfg     ReplicatorConfig
	missing prometheus.Gauge
	errs    *prometheus.CounterVec
	removed prometheus.Counter
}

// DefaultReplicatorConfig returns the defaults, without the required
// fields (Fetch's default needs Self, so NewReplicator makes it).
func DefaultReplicatorConfig() ReplicatorConfig {
	return ReplicatorConfig{MinBackoff: 250 * time.Millisecond, MaxBackoff: 30 * time.Second, Clock: clock.System{},
		Logger: slog.Default()}
}

// Validate reports a ReplicatorConfig that cannot work.
func (c ReplicatorConfig) Validate() error {
	switch {
	case c.Self == "" || c.Keystore == nil || c.Store == nil || c.Notifier == nil:
		return errors.New("keyring: Self, Keystore, Store and Notifier are required")
	case c.MinBackoff < 0 || c.MaxBackoff < 0:
		return errors.New("keyring: MinBackoff and MaxBackoff must not be negative")
	}
	return nil
}

// NewReplicator returns a Replicator.
func NewReplicator(cfg ReplicatorConfig) (*Replicator, error) {
	if cfg.Fetch == nil && cfg.Self != "" {
		cfg.Fetch = HTTPFetcher(cfg.Self, "", nil)
	}
	defaults.Fill(&cfg, DefaultReplicatorConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(30*time.Second, cfg.MinBackoff)
	}
	r := &Replicator{cfg: cfg,
		missing: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_keyring_keys_missing",
			Help: "Root keys the log records whose material this server's keystore lacks."}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_keyring_fetch_errors_total",
			Help: "Failed fetches of a root key's material from a peer, by peer."}, []string{"peer"}),
		removed: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_keyring_files_removed_total",
			Help: "Keystore files of deleted root keys removed from this server."}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{r.missing, r.errs, r.removed} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("keyring metrics: %w", err)
			}
		}
	}
	return r, nil
}

// Run reconciles on start, on every change of the key tables, and after
// a backoff while keys are missing, until ctx ends.
func (r *Replicator) Run(ctx context.Context) error {
	backoff := r.cfg.MinBackoff
	for {
		changed := r.cfg.Notifier.Table(kp.Table)
		deleted := r.cfg.Notifier.Table(kp.DeletedTable)
		missing := r.Reconcile(ctx)
		wait := time.Duration(1<<62 - 1)
		if missing > 0 {
			wait = backoff
			backoff = min(2*backoff, r.cfg.MaxBackoff)
		} else {
			backoff = r.cfg.MinBackoff
		}
		t := r.cfg.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-changed:
		case <-deleted:
		case <-t.C():
		}
		t.Stop()
	}
}

// Reconcile fetches every key the log has and the keystore lacks, one by
// one, and removes the files of deleted keys. It returns how many keys are
// still missing.
func (r *Replicator) Reconcile(ctx context.Context) int {
	snap := r.cfg.Store.Snapshot()
	v := projections.NewView(snap)
	keys, err := kp.List(v)
	var deleted []string
	if err == nil {
		deleted, err = kp.Deleted(v)
	}
	var peers []*servers.Server
	if err == nil {
		peers, err = servers.List(v)
	}
	snap.Close()
	if err != nil {
		r.cfg.Logger.Error("keyring replication: read the log's keys", "err", err)
		return 1
	}
	for _, id := range deleted {
		if !r.cfg.Keystore.Has(id) {
			continue
		}
		if err := r.cfg.Keystore.Delete(id); err != nil {
			r.cfg.Logger.Error("keyring: remove a deleted key's file", "key_id", id, "err", err)
			continue
		}
		r.removed.Inc()
		r.cfg.Logger.Info("keyring: removed a deleted key's file", "key_id", id)
	}
	missing := 0
	for _, k := range keys {
		if r.cfg.Keystore.Has(k.KeyID) {
			continue
		}
		if err := r.fetch(ctx, k, peers); err != nil {
			missing++
			r.cfg.Logger.Warn("keyring: root key not replicated; will retry", "key_id", k.KeyID, "err", err)
			continue // the next key does not wait for this one
		}
		r.cfg.Logger.Info("keyring: root key replicated", "key_id", k.KeyID)
	}
	r.missing.Set(float64(missing))
	return missing
}

// fetch asks each peer in turn for key k until one has it.
func (r *Replicator) fetch(ctx context.Context, k *kp.Key, peers []*servers.Server) error {
	var errs []error
	for _, p := range peers {
		if p.ID == r.cfg.Self || p.HTTPAddr == "" {
			continue
		}
		key, err := r.cfg.Fetch(ctx, p.HTTPAddr, k.KeyID)
		if err == nil {
			err = check(k, key)
		}
		if err != nil {
			r.errs.WithLabelValues(p.ID).Inc()
			errs = append(errs, fmt.Errorf("from %s: %w", p.ID, err))
			continue
		}
		return r.cfg.Keystore.Put(key)
	}
	if len(errs) == 0 {
		return errors.New("no peer to fetch from")
	}
	return errors.Join(errs...)
}

// check verifies fetched material against the log's metadata.
func check(meta *kp.Key, key *keystore.Key) error {
	if key.ID != meta.KeyID {
		return fmt.Errorf("peer answered key %q", key.ID)
	}
	if len(meta.PublicKey) > 0 && !bytes.Equal(key.PublicKey(), meta.PublicKey) {
		return errors.New("material does not match the public key the log records")
	}
	return nil
}

// HTTPFetcher returns a Fetcher over the peers' API through api.Client:
// GET /v1/operator/keyring/key/{id} with this server's id (and the
// cluster's server token, when set).
func HTTPFetcher(self, token string, client *http.Client) Fetcher {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	opts := []api.Option{api.WithHTTPClient(client), api.WithHeader(httpapi.ServerIDHeader, self)}
	if token != "" {
		opts = append(opts, api.WithHeader(httpapi.ServerTokenHeader, token))
	}
	return func(ctx context.Context, httpAddr, id string) (*keystore.Key, error) {
		c, err := api.New([]string{httpAddr}, opts...)
		if err != nil {
			return nil, err
		}
		body, _, err := c.Open(ctx, &api.Request{Method: http.MethodGet, Path: api.Pathf("/v1/operator/keyring/key/%s", id)})
		if err != nil {
			return nil, fmt.Errorf("GET key %s from %s: %w", id, httpAddr, err)
		}
		defer body.Close()
		var f keystore.File
		if err := json.NewDecoder(http.MaxBytesReader(nil, body, 1<<16)).Decode(&f); err != nil {
			return nil, fmt.Errorf("decode key %s from %s: %w", id, httpAddr, err)
		}
		k, err := keystore.NewKey(f.KeyID, f.CreateTime, f.Material)
		clear(f.Material)
		return k, err
	}
}
