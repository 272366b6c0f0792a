package keyring_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/events"
	pk "github.com/ordoplane/ordo/processors/keyring"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/keystore"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// TestOneFailingKeyDoesNotBlockOthers is N5: replication goes key by key;
// the key no peer can give is logged with its id and counted, and the keys
// after it still arrive; material not matching the log is refused; a
// deleted key's file is removed.
func TestOneFailingKeyDoesNotBlockOthers(t *testing.T) {
	dir := t.TempDir()
	store, err := kv.Open(filepath.Join(dir, "state"), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	f, err := fsm.New(store, fsm.Config{Projections: all.Projections(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var idx atomic.Uint64
	apply := func(ps ...events.Payload) {
		t.Helper()
		e := events.Entry{Time: 1, CommandID: "c"}
		for _, p := range ps {
			ev, _ := events.New("ev", p)
			e.Events = append(e.Events, ev)
		}
		e.CommandID += string(rune('a' + idx.Load()))
		data, _ := events.EncodeEntry(&e)
		if r := f.Apply([]raftlog.Log{{Index: idx.Add(1), Term: 1, Data: data}})[0].(fsm.Result); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	// The "leader" holds k1, k2 (unreachable), k3 and k4 (corrupt on the wire).
	peer := map[string]*keystore.Key{}
	for _, id := range []string{"k1", "k2", "k3", "k4"} {
		k, _ := keystore.Generate(id, 1)
		peer[id] = k
		apply(&events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: id, Algorithm: events.RootKeyAlgorithm, State: events.RootKeyInactive, CreateTime: 1, PublicKey: k.PublicKey()}})
	}
	apply(&events.ServerRegistered{ID: "leader", RaftAddr: "r", HTTPAddr: "leader:4646"},
		&events.ServerRegistered{ID: "me", RaftAddr: "r2", HTTPAddr: "me:4646"})

	ks, _ := keystore.Open(filepath.Join(dir, "keystore"))
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	var asked []string
	fetch := func(_ context.Context, addr, id string) (*keystore.Key, error) {
		if addr != "leader:4646" {
			t.Errorf("fetched from %s", addr)
		}
		asked = append(asked, id)
		switch id {
		case "k2":
			return nil, errors.New("connection refused")
		case "k4":
			other, _ := keystore.Generate("k4", 1)
			return other, nil
		}
		return peer[id], nil
	}
	rep, err := pk.NewReplicator(pk.ReplicatorConfig{Self: "me", Keystore: ks, Store: store, Notifier: f.Notifier(),
		Fetch: fetch, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if missing := rep.Reconcile(context.Background()); missing != 2 {
		t.Fatalf("missing = %d, want 2 (k2, k4)", missing)
	}
	if strings.Join(asked, ",") != "k1,k2,k3,k4" {
		t.Fatalf("asked for %v", asked)
	}
	for id, want := range map[string]bool{"k1": true, "k2": false, "k3": true, "k4": false} {
		if ks.Has(id) != want {
			t.Errorf("keystore has %s = %v, want %v", id, !want, want)
		}
	}
	if !strings.Contains(logs.String(), "key_id=k2") || !strings.Contains(logs.String(), "key_id=k4") {
		t.Fatalf("failures not logged with their key ids:\n%s", logs.String())
	}
	if mat := base64.StdEncoding.EncodeToString(peer["k1"].Material()); strings.Contains(logs.String(), mat) {
		t.Fatal("key material in the log")
	}
	if got := gauge(t, reg, "ordo_keyring_keys_missing"); got != 2 {
		t.Fatalf("keys missing gauge = %v", got)
	}
	// The peer recovers: the next round fetches only what is missing.
	asked = nil
	// Both now answer correctly.
	rep2, _ := pk.NewReplicator(pk.ReplicatorConfig{Self: "me", Keystore: ks, Store: store, Notifier: f.Notifier(),
		Fetch: func(_ context.Context, _, id string) (*keystore.Key, error) {
			asked = append(asked, id)
			return peer[id], nil
		},
		Logger: slog.New(slog.DiscardHandler)})
	if missing := rep2.Reconcile(context.Background()); missing != 0 || strings.Join(asked, ",") != "k2,k4" {
		t.Fatalf("second round: missing %d, asked %v", missing, asked)
	}
	// A deleted key's file is removed.
	apply(&events.RootKeyDeleted{KeyID: "k1"})
	rep2.Reconcile(context.Background())
	if ks.Has("k1") {
		t.Fatal("a deleted key's file stayed")
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
