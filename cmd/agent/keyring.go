package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/commands/keyring"
	pk "github.com/ordoplane/ordo/processors/keyring"
	"github.com/ordoplane/ordo/processors/keyringgc"
	"github.com/ordoplane/ordo/processors/supervisor"
	"github.com/ordoplane/ordo/storage/keystore"
)

// KeyringConfig tunes the root keyring (docs/keyring.md).
type KeyringConfig struct {
	// ServerToken, when set, is a secret every server of the cluster
	// shares and presents to fetch key material from a peer.
	ServerToken string `json:"-"`
	// GCInterval is the time between keyring GC passes; default 10m.
	GCInterval time.Duration `json:"GCInterval"`
	// GCThreshold is how old an inactive key must be to be collected;
	// default 1h; negative collects at any age.
	GCThreshold time.Duration `json:"GCThreshold"`
}

// agentKeyring is the server's keyring and its background work.
type agentKeyring struct {
	keyring    *keyring.Keyring
	replicator *pk.Replicator
	gc         *keyringgc.GC
	procs      []supervisor.Processor
}

// newKeyring opens <data-dir>/keystore and builds the keyring, its
// replicator (every server) and its leader-only processors.
func (a *Agent) newKeyring() (*agentKeyring, error) {
	ks, err := keystore.Open(filepath.Join(a.cfg.DataDir, "keystore"))
	if err != nil {
		return nil, err
	}
	kr, err := keyring.New(keyring.Config{Keystore: ks, Store: a.store, Pipeline: a.pipeline, Logger: a.log})
	if err != nil {
		return nil, err
	}
	rep, err := pk.NewReplicator(pk.ReplicatorConfig{Self: a.id, Keystore: ks, Store: a.store, Notifier: a.fsm.Notifier(),
		Fetch: pk.HTTPFetcher(a.id, a.cfg.Keyring.ServerToken, nil), Logger: a.log, Registerer: a.reg})
	if err != nil {
		return nil, err
	}
	rk, err := pk.NewRekeyer(pk.RekeyerConfig{Keyring: kr, Pipeline: a.pipeline, Store: a.store, Notifier: a.fsm.Notifier(),
		Logger: a.log, Registerer: a.reg})
	if err != nil {
		return nil, err
	}
	gc, err := keyringgc.New(keyringgc.Config{Pipeline: a.pipeline, Store: a.store, Interval: a.cfg.Keyring.GCInterval,
		Threshold: a.cfg.Keyring.GCThreshold, Logger: a.log, Registerer: a.reg})
	if err != nil {
		return nil, fmt.Errorf("keyring gc: %w", err)
	}
	return &agentKeyring{keyring: kr, replicator: rep, gc: gc,
		procs: []supervisor.Processor{rk, gc}}, nil
}

// api returns the keyring's API options.
func (k *agentKeyring) api(token string) *httpapi.KeyringOptions {
	return &httpapi.KeyringOptions{Keyring: k.keyring, ServerToken: token,
		CollectGarbage: func(ctx context.Context) ([]string, error) { return k.gc.Collect(ctx) }}
}

// Keyring returns the server's root keyring: the variables' Encrypter and
// the ACL resolver's workload identity verifier.
func (a *Agent) Keyring() *keyring.Keyring { return a.kr.keyring }

// KeyringGC returns the keyring GC, for an on-demand pass.
func (a *Agent) KeyringGC() *keyringgc.GC { return a.kr.gc }
