package keyring_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pt "github.com/ordoplane/ordo/projections/projectionstest"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/keyring"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/fsm"
	kp "github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/storage/keystore"
	"github.com/ordoplane/ordo/storage/kv"
)

type harness struct {
	store *kv.Store
	log   *pt.FSMLog
	p     *commands.Pipeline
	ks    *keystore.Store
	kr    *keyring.Keyring
	now   time.Time
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	store, err := kv.Open(filepath.Join(dir, "state"), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fsm.Close)
	h := &harness{store: store, log: &pt.FSMLog{FSM: fsm}, now: time.Unix(1_700_000_000, 0)}
	clock := clocktest.NewClock(h.now)
	h.p, err = commands.NewPipeline(commands.PipelineConfig{Log: h.log, Store: store, Applied: fsm.Applied, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.p.Close)
	if h.ks, err = keystore.Open(filepath.Join(dir, "keystore")); err != nil {
		t.Fatal(err)
	}
	if h.kr, err = keyring.New(keyring.Config{Keystore: h.ks, Store: store, Pipeline: h.p, Clock: clock}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) run(t *testing.T, c commands.Command) error {
	t.Helper()
	_, err := h.p.Run(context.Background(), "test", commands.Request{}, c)
	return err
}

func (h *harness) key(t *testing.T, id string) *kp.Key {
	t.Helper()
	k, err := kp.Get(projections.NewView(h.store), id)
	if err != nil {
		t.Fatalf("key %s: %v", id, err)
	}
	return k
}

// TestRotateRemove: the first key is created once; rotating writes the
// key to the keystore and demotes the old one (rekeying with full);
// removing the active key is refused with a 400 naming key_id.
func TestRotateRemove(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	first, err := h.kr.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := h.kr.Initialize(ctx); err != nil || again != first {
		t.Fatalf("second Initialize = %s, %v; want %s", again, err, first)
	}
	if ids, _ := h.ks.IDs(); len(ids) != 1 || ids[0] != first {
		t.Fatalf("keystore holds %v, want only %s", ids, first)
	}
	k1 := h.key(t, first)
	if !k1.Active() || k1.Algorithm != events.RootKeyAlgorithm {
		t.Fatalf("first key %+v", k1)
	}
	mat, _ := h.ks.Get(first)
	if !ed25519.PublicKey(k1.PublicKey).Equal(mat.PublicKey()) {
		t.Fatal("the log's public key is not the keystore key's")
	}

	_, second, err := h.kr.Rotate(ctx, commands.Request{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if h.key(t, first).State != events.RootKeyInactive || !h.key(t, second).Active() || !h.ks.Has(second) {
		t.Fatal("rotate did not demote the old key or record the new one")
	}
	_, third, err := h.kr.Rotate(ctx, commands.Request{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if h.key(t, second).State != events.RootKeyRekeying {
		t.Fatalf("full rotate left the old key %s", h.key(t, second).State)
	}

	_, err = h.kr.Remove(ctx, commands.Request{}, third)
	var ve *commands.ValidationError
	if !errors.As(err, &ve) || ve.Field != "key_id" || commands.Status(err) != 400 {
		t.Fatalf("removing the active key: %v", err)
	}
	if _, err = h.kr.Remove(ctx, commands.Request{}, second); !errors.As(err, &ve) {
		t.Fatalf("removing a rekeying key: %v", err)
	}
	if _, err := h.kr.Remove(ctx, commands.Request{}, "nope"); commands.Status(err) != 404 {
		t.Fatalf("removing an unknown key: %v", err)
	}
	if _, err := h.kr.Remove(ctx, commands.Request{}, "../x"); commands.Status(err) != 400 {
		t.Fatalf("removing a bad id: %v", err)
	}
	if _, err := h.kr.Remove(ctx, commands.Request{}, first); err != nil {
		t.Fatal(err)
	}
	if del, _ := kp.Deleted(projections.NewView(h.store)); len(del) != 1 || del[0] != first {
		t.Fatalf("Deleted = %v", del)
	}
}

// TestEncrypter: the Encrypter the variables engine uses encrypts under
// the active key; old ciphertexts still open after a rotation.
func TestEncrypter(t *testing.T) {
	h := newHarness(t)
	var enc keyring.Encrypter = h.kr
	if _, _, err := enc.Encrypt([]byte("x"), nil); err == nil {
		t.Fatal("encrypted without a key")
	}
	first, _ := h.kr.Initialize(context.Background())
	id, ct, err := enc.Encrypt([]byte("hunter2"), []byte("aad"))
	if err != nil || id != first || strings.Contains(string(ct), "hunter2") {
		t.Fatalf("Encrypt = %s, %v", id, err)
	}
	_, second, _ := h.kr.Rotate(context.Background(), commands.Request{}, false)
	id2, ct2, _ := enc.Encrypt([]byte("hunter2"), []byte("aad"))
	if id2 != second {
		t.Fatalf("encrypted with %s after rotating to %s", id2, second)
	}
	for _, c := range []struct {
		id string
		ct []byte
	}{{id, ct}, {id2, ct2}} {
		if pt, err := enc.Decrypt(c.id, c.ct, []byte("aad")); err != nil || string(pt) != "hunter2" {
			t.Fatalf("Decrypt(%s) = %q, %v", c.id, pt, err)
		}
	}
	if _, err := enc.Decrypt("missing", ct, nil); !errors.Is(err, keyring.ErrKeyMissing) {
		t.Fatalf("Decrypt with a missing key = %v", err)
	}
}

// TestCollectOnly: the GC's delete skips a key a live allocation was
// signed with, and loses the race to a placement signed with it.
func TestCollectOnly(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	first, _ := h.kr.Initialize(ctx)
	placed := &events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{{ID: "a1", Namespace: "default", JobID: "web",
		TaskGroup: "g", NodeID: "n", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning, SigningKeyID: first}}}
	if err := h.run(t, rawEvents{placed}); err != nil {
		t.Fatal(err)
	}
	h.kr.Rotate(ctx, commands.Request{}, false)
	if err := h.run(t, keyring.Remove{KeyID: first, CollectOnly: true}); err != nil {
		t.Fatal(err)
	}
	h.key(t, first) // still there: a1 is live
	// Decide, then a placement signed with the key lands first: 409.
	v := projections.NewView(h.store)
	dec, err := keyring.Remove{KeyID: first, CollectOnly: true}.Decide(v, h.now, nil)
	if err != nil || len(dec.Events) != 0 {
		t.Fatalf("decided %v, %v", dec, err)
	}
	stop := &events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{{ID: "a1", DesiredStatus: events.AllocDesiredStop}}}
	if err := h.run(t, rawEvents{stop}); err != nil {
		t.Fatal(err)
	}
	dec, err = keyring.Remove{KeyID: first, CollectOnly: true}.Decide(projections.NewView(h.store), h.now, nil)
	if err != nil || len(dec.Events) != 1 {
		t.Fatalf("decided %v, %v", dec, err)
	}
	placed.Allocs[0].ID, placed.Allocs[0].DesiredStatus = "a2", events.AllocDesiredRun
	if err := h.run(t, rawEvents{placed}); err != nil {
		t.Fatal(err)
	}
	if err := h.run(t, decided{dec}); commands.Status(err) != 409 {
		t.Fatalf("a stale GC delete = %v, want 409", err)
	}
	if n, _, _ := allocs.LiveSignedBy(projections.NewView(h.store), first); n != 1 {
		t.Fatalf("live signed by %s: %d", first, n)
	}
}

// rawEvents appends the given payloads as they are.
type rawEvents []events.Payload

func (rawEvents) Validate() error { return nil }
func (r rawEvents) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: r}, nil
}

// decided appends a decision made earlier.
type decided struct{ d commands.Decision }

func (decided) Validate() error { return nil }
func (d decided) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return d.d, nil
}

// TestKeyWithVariablesStays: a root key still encrypting variables is
// neither removed (400 naming key_id) nor collected, and a variable that
// lands under it between the GC's decide and apply (sealed before a
// rotation, committed after) refuses the delete at apply.
func TestKeyWithVariablesStays(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	first, _ := h.kr.Initialize(ctx)
	put := func(path string) {
		t.Helper()
		id, data, err := variables.Seal(h.kr, "default", path, variables.Items{"k": "v"})
		if err != nil {
			t.Fatal(err)
		}
		// Sealed now, committed later: keep the key id the seal used.
		if err := h.run(t, rawEvents{&events.VariableUpserted{Namespace: "default", Path: path, KeyID: id, Data: data}}); err != nil {
			t.Fatal(err)
		}
	}
	put("a")
	h.kr.Rotate(ctx, commands.Request{}, false)
	_, err := h.kr.Remove(ctx, commands.Request{}, first)
	var ve *commands.ValidationError
	if !errors.As(err, &ve) || ve.Field != "key_id" || !strings.Contains(err.Error(), "1 variables") {
		t.Fatalf("removing a key with variables: %v", err)
	}
	if dec, err := (keyring.Remove{KeyID: first, CollectOnly: true}).Decide(projections.NewView(h.store), h.now, nil); err != nil || len(dec.Events) != 0 {
		t.Fatalf("GC decided %v, %v for a key with variables", dec, err)
	}
	// Re-encrypt a (as the rekey job does) and decide the GC delete; then
	// a variable sealed with first before the rotation commits: 409.
	if err := h.run(t, rawEvents{&events.VariableDeleted{Namespace: "default", Path: "a"}}); err != nil {
		t.Fatal(err)
	}
	dec, err := keyring.Remove{KeyID: first, CollectOnly: true}.Decide(projections.NewView(h.store), h.now, nil)
	if err != nil || len(dec.Events) != 1 {
		t.Fatalf("GC decided %v, %v", dec, err)
	}
	late, data, _ := variables.Seal(oldKeyEncrypter{h, first}, "default", "late", variables.Items{"k": "v"})
	if err := h.run(t, rawEvents{&events.VariableUpserted{Namespace: "default", Path: "late", KeyID: late, Data: data}}); err != nil {
		t.Fatal(err)
	}
	if err := h.run(t, decided{dec}); commands.Status(err) != 409 {
		t.Fatalf("GC delete over a late variable = %v, want 409", err)
	}
	h.key(t, first)
}

// oldKeyEncrypter seals with a given key of the keystore.
type oldKeyEncrypter struct {
	h  *harness
	id string
}

func (o oldKeyEncrypter) Encrypt(plaintext, aad []byte) (string, []byte, error) {
	k, err := o.h.ks.Get(o.id)
	if err != nil {
		return "", nil, err
	}
	ct, err := k.Seal(plaintext, aad)
	return o.id, ct, err
}

func (o oldKeyEncrypter) Decrypt(id string, ct, aad []byte) ([]byte, error) {
	return o.h.kr.Decrypt(id, ct, aad)
}
