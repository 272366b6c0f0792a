package keyring_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	pt "github.com/ordoplane/ordo/projections/projectionstest"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/keyring"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/events"
	pk "github.com/ordoplane/ordo/processors/keyring"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	kp "github.com/ordoplane/ordo/projections/keyring"
	pv "github.com/ordoplane/ordo/projections/variables"
	"github.com/ordoplane/ordo/storage/keystore"
	"github.com/ordoplane/ordo/storage/kv"
)

// TestFullRotation is N12: after a full rotation, the rekey job leaves
// every variable readable and encrypted under the new key, in pages, and
// marks the old key inactive.
func TestFullRotation(t *testing.T) {
	dir := t.TempDir()
	store, err := kv.Open(filepath.Join(dir, "state"), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer fsm.Close()
	p, _ := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: fsm}, Store: store, Applied: fsm.Applied})
	defer p.Close()
	ks, _ := keystore.Open(filepath.Join(dir, "keystore"))
	kr, _ := keyring.New(keyring.Config{Keystore: ks, Store: store, Pipeline: p})
	ctx := context.Background()
	old, err := kr.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 25
	for i := range n {
		path := fmt.Sprintf("app/v%02d", i)
		id, data, err := variables.Seal(kr, "default", path, variables.Items{"password": fmt.Sprint("secret-", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Run(ctx, "var.put", commands.Request{}, variables.Put{Namespace: "default", Path: path, KeyID: id, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	_, newKey, err := kr.Rotate(ctx, commands.Request{}, true)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := pk.NewRekeyer(pk.RekeyerConfig{Keyring: kr, Pipeline: p, Store: store, Notifier: fsm.Notifier(), PageSize: 10, Batch: 3, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for {
		busy, err := rk.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !busy {
			break
		}
		if steps++; steps == 1 {
			// A variable sealed with the old key behind the cursor (as a
			// write racing the rotation could leave one) is found by the
			// pass from the start before the key is done.
			behind(t, ctx, p, ks, old, "app/a00", "secret-behind")
		}
		if steps > 10 {
			t.Fatal("rekey does not finish")
		}
	}
	// Three pages (10, 10, 5), the end of the index, the pass from the
	// start (a00), the end again, then an empty pass and the state change.
	if steps != 7 {
		t.Fatalf("%d steps, want 7", steps)
	}
	v := projections.NewView(store)
	if x, err := pv.Get(v, "default", "app/a00"); err != nil || x.KeyID != newKey {
		t.Fatalf("the variable behind the cursor: %+v %v", x, err)
	} else if items, err := variables.Open(kr, "default", "app/a00", x.KeyID, x.Data); err != nil || items["password"] != "secret-behind" {
		t.Fatalf("app/a00: %v %v", items, err)
	}
	if k, _ := kp.Get(v, old); k.State != events.RootKeyInactive {
		t.Fatalf("old key %s", k.State)
	}
	for i := range n {
		path := fmt.Sprintf("app/v%02d", i)
		x, err := pv.Get(v, "default", path)
		if err != nil {
			t.Fatal(err)
		}
		if x.KeyID != newKey {
			t.Fatalf("%s encrypted with %s, want %s", path, x.KeyID, newKey)
		}
		items, err := variables.Open(kr, "default", path, x.KeyID, x.Data)
		if err != nil || items["password"] != fmt.Sprint("secret-", i) {
			t.Fatalf("%s: %v %v", path, items, err)
		}
	}
}

// oldKey encrypts with one given key of the keystore, as the active key
// did before a rotation.
type oldKey struct {
	ks *keystore.Store
	id string
}

func (o oldKey) Encrypt(plaintext, aad []byte) (string, []byte, error) {
	k, err := o.ks.Get(o.id)
	if err != nil {
		return "", nil, err
	}
	ct, err := k.Seal(plaintext, aad)
	return o.id, ct, err
}

func (o oldKey) Decrypt(string, []byte, []byte) ([]byte, error) { panic("not used") }

// behind puts a variable sealed with key id at path.
func behind(t *testing.T, ctx context.Context, p *commands.Pipeline, ks *keystore.Store, id, path, value string) {
	t.Helper()
	kid, data, err := variables.Seal(oldKey{ks, id}, "default", path, variables.Items{"password": value})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(ctx, "var.put", commands.Request{}, variables.Put{Namespace: "default", Path: path, KeyID: kid, Data: data}); err != nil {
		t.Fatal(err)
	}
}
