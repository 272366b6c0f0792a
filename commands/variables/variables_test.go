package variables_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	pt "github.com/ordoplane/ordo/projections/projectionstest"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/commands/variables/variablestest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	pv "github.com/ordoplane/ordo/projections/variables"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// harness applies decisions through a real FSM, as a server would, so
// preconditions are checked at apply.
type harness struct {
	t     *testing.T
	store *kv.Store
	fsm   *fsm.FSM
	index uint64
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	store := pt.OpenStore(t)
	return &harness{t: t, store: store, fsm: pt.NewFSM(t, store)}
}

// decide runs c's Validate and Decide on the current state.
func (h *harness) decide(c commands.Command) (commands.Decision, error) {
	if err := c.Validate(); err != nil {
		return commands.Decision{}, err
	}
	snap := h.store.Snapshot()
	defer snap.Close()
	return c.Decide(projections.NewView(snap), time.Unix(1_700_000_000, 0), func() string { return "id" })
}

// commit appends d as the next entry and returns the apply result.
func (h *harness) commit(d commands.Decision) error {
	h.t.Helper()
	h.index++
	e := events.Entry{Time: int64(h.index), CommandID: fmt.Sprint("c", h.index), Preconditions: d.Preconditions}
	for i, p := range d.Events {
		ev, err := events.New(fmt.Sprint("ev", h.index, i), p)
		if err != nil {
			h.t.Fatal(err)
		}
		e.Events = append(e.Events, ev)
	}
	data, err := events.EncodeEntry(&e)
	if err != nil {
		h.t.Fatal(err)
	}
	res := h.fsm.Apply([]raftlog.Log{{Index: h.index, Term: 1, Data: data}})[0].(fsm.Result)
	var re *fsm.RejectedError
	if errors.As(res.Err, &re) {
		return &commands.ConflictError{Precondition: re.Precondition, Reason: re.Reason}
	}
	return res.Err
}

// run decides and commits c.
func (h *harness) run(c commands.Command) error {
	h.t.Helper()
	d, err := h.decide(c)
	if err != nil {
		return err
	}
	if len(d.Events) == 0 {
		return nil
	}
	return h.commit(d)
}

func (h *harness) get(ns, path string) *pv.Variable {
	h.t.Helper()
	snap := h.store.Snapshot()
	defer snap.Close()
	v, err := pv.Get(projections.NewView(snap), ns, path)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		h.t.Fatal(err)
	}
	return v
}

func cas(n uint64) *uint64 { return &n }

func sealed(t *testing.T, enc variables.Encrypter, ns, path string, items variables.Items, c *uint64) variables.Put {
	t.Helper()
	kid, data, err := variables.Seal(enc, ns, path, items)
	if err != nil {
		t.Fatal(err)
	}
	return variables.Put{Namespace: ns, Path: path, CAS: c, KeyID: kid, Data: data}
}

func wantConflict(t *testing.T, err error, cas bool, contains string) {
	t.Helper()
	var ce *commands.ConflictError
	if !errors.As(err, &ce) || commands.Status(err) != 409 {
		t.Fatalf("err = %v (%T), want a 409 conflict", err, err)
	}
	if variables.IsCASConflict(err) != cas {
		t.Fatalf("IsCASConflict(%v) = %v, want %v", err, !cas, cas)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Fatalf("err = %q, want it to say %q", err, contains)
	}
}

// TestCAS: cas=0 creates only when absent; cas=N writes or deletes only at
// modify index N; without cas a put always writes. A mismatch seen at
// decide is refused before the log, and one that arises between decide
// and apply is refused at apply.
func TestCAS(t *testing.T) {
	h := newHarness(t)
	enc := variablestest.NewEncrypter(t)
	items := variables.Items{"password": "hunter2"}
	if err := h.run(sealed(t, enc, "default", "app/db", items, cas(0))); err != nil {
		t.Fatalf("create with cas 0: %v", err)
	}
	created := h.get("default", "app/db").ModifyIndex
	wantConflict(t, h.run(sealed(t, enc, "default", "app/db", items, cas(0))), true, "already exists")
	wantConflict(t, h.run(sealed(t, enc, "default", "app/db", items, cas(created+5))), true, "not "+fmt.Sprint(created+5))
	if err := h.run(sealed(t, enc, "default", "app/db", variables.Items{"password": "new"}, cas(created))); err != nil {
		t.Fatalf("update at the right index: %v", err)
	}
	cur := h.get("default", "app/db")
	if cur.ModifyIndex == created || cur.CreateIndex != created {
		t.Fatalf("after update: %+v", cur)
	}
	// Two writers decide on the same state; the second fails at apply.
	a, err := h.decide(sealed(t, enc, "default", "app/db", variables.Items{"a": "1"}, cas(cur.ModifyIndex)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.decide(sealed(t, enc, "default", "app/db", variables.Items{"b": "2"}, cas(cur.ModifyIndex)))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.commit(a); err != nil {
		t.Fatal(err)
	}
	wantConflict(t, h.commit(b), true, "modify index is")
	got, err := variables.Open(enc, "default", "app/db", h.get("default", "app/db").KeyID, h.get("default", "app/db").Data)
	if err != nil || got["a"] != "1" {
		t.Fatalf("the first writer's items: %v, %v", got, err)
	}
	// Without cas, a put overwrites.
	if err := h.run(sealed(t, enc, "default", "app/db", items, nil)); err != nil {
		t.Fatal(err)
	}
	// Delete: a wrong cas is refused, the right one deletes, a missing
	// variable deletes as a no-op, but not with a cas it cannot meet.
	idx := h.get("default", "app/db").ModifyIndex
	wantConflict(t, h.run(variables.Delete{Namespace: "default", Path: "app/db", CAS: cas(idx - 1)}), true, "modify index is")
	if err := h.run(variables.Delete{Namespace: "default", Path: "app/db", CAS: cas(idx)}); err != nil {
		t.Fatal(err)
	}
	if h.get("default", "app/db") != nil {
		t.Fatal("variable survived its delete")
	}
	if err := h.run(variables.Delete{Namespace: "default", Path: "app/db"}); err != nil {
		t.Fatalf("deleting a missing variable: %v", err)
	}
	wantConflict(t, h.run(variables.Delete{Namespace: "default", Path: "app/db", CAS: cas(3)}), true, "does not exist")
}

// TestQuotaAtDecide (N13): a put over the namespace quota is refused with
// a 409 that says so before anything is proposed.
func TestQuotaAtDecide(t *testing.T) {
	h := newHarness(t)
	enc := variablestest.NewEncrypter(t)
	if err := h.commit(commands.Decision{Events: []events.Payload{&events.NamespaceUpserted{
		Namespace: events.Namespace{Name: "small", VariablesQuota: 200}}}}); err != nil {
		t.Fatal(err)
	}
	if err := h.run(sealed(t, enc, "small", "a", variables.Items{"k": strings.Repeat("x", 100)}, nil)); err != nil {
		t.Fatal(err)
	}
	_, err := h.decide(sealed(t, enc, "small", "b", variables.Items{"k": strings.Repeat("x", 100)}, nil))
	wantConflict(t, err, false, `namespace "small" variables quota exceeded`)
}

func TestPutToMissingNamespace(t *testing.T) {
	h := newHarness(t)
	enc := variablestest.NewEncrypter(t)
	_, err := h.decide(sealed(t, enc, "nope", "a", variables.Items{"k": "v"}, nil))
	var ve *commands.ValidationError
	if !errors.As(err, &ve) || ve.Field != "namespace" {
		t.Fatalf("err = %v, want a 400 naming namespace", err)
	}
}

func TestValidPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"a", true},
		{"app/db/password", true},
		{"A-z_0~9/x", true},
		{strings.Repeat("p", 128), true},
		{"nomad/jobs", true},
		{"nomad/jobs/web/api", true},
		{"nomad/job-templates/t", true},
		{"nomadic/x", true},
		{"x/nomad/y", true},
		{"", false},
		{strings.Repeat("p", 129), false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{"a.b", false},
		{"a@b", false},
		{"a b", false},
		{"a%2Fb", false},
		{"ü", false},
		{"nomad", false},
		{"nomad/other", false},
		{"nomad/variables/x", false},
	} {
		err := variables.ValidPath("path", tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("ValidPath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		var ve *commands.ValidationError
		if err != nil && (!errors.As(err, &ve) || ve.Field != "path") {
			t.Errorf("ValidPath(%q) = %v, want a ValidationError naming path", tc.path, err)
		}
	}
}

func TestValidItems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items variables.Items
		ok    bool
	}{
		{"one", variables.Items{"k": "v"}, true},
		{"empty value", variables.Items{"k": ""}, true},
		{"none", nil, false},
		{"empty map", variables.Items{}, false},
		{"empty key", variables.Items{"": "v"}, false},
		{"too big", variables.Items{"k": strings.Repeat("v", variables.MaxItemsBytes)}, false},
	} {
		err := variables.ValidItems(tc.items)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestSealBindsPath: a ciphertext opens only at the namespace and path it
// was sealed for, and holds no item in clear.
func TestSealBindsPath(t *testing.T) {
	enc := variablestest.NewEncrypter(t)
	kid, data, err := variables.Seal(enc, "team-a", "db", variables.Items{"password": "correct-horse-battery"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("correct-horse")) || bytes.Contains(data, []byte("password")) {
		t.Fatal("ciphertext holds the item in clear")
	}
	if _, err := variables.Open(enc, "team-b", "db", kid, data); err == nil {
		t.Fatal("opened under another namespace")
	}
	if _, err := variables.Open(enc, "team-a", "db2", kid, data); err == nil {
		t.Fatal("opened under another path")
	}
	items, err := variables.Open(enc, "team-a", "db", kid, data)
	if err != nil || items["password"] != "correct-horse-battery" {
		t.Fatalf("Open = %v, %v", items, err)
	}
	if _, _, err := variables.Seal(nil, "a", "b", items); !errors.Is(err, variables.ErrNoEncrypter) {
		t.Fatalf("Seal without an encrypter: %v", err)
	}
}

// TestRequestHashHasNoCiphertext: the pipeline digests a put to tell
// retries apart; the digest covers the target and cas only, so a retry
// (re-encrypted with a fresh nonce) is recognised, and nothing derived
// from the items reaches the log.
func TestRequestHashHasNoCiphertext(t *testing.T) {
	enc := variablestest.NewEncrypter(t)
	a := sealed(t, enc, "default", "x", variables.Items{"k": "v"}, cas(3))
	b := sealed(t, enc, "default", "x", variables.Items{"k": "v"}, cas(3))
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	if !bytes.Equal(ja, jb) || bytes.Contains(ja, []byte("Data")) || bytes.Contains(ja, []byte("KeyID")) {
		t.Fatalf("digested forms differ or hold the ciphertext: %s / %s", ja, jb)
	}
}
