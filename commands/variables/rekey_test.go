package variables_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/commands/variables/variablestest"
	"github.com/ordoplane/ordo/events"
)

// TestRekeyBatchCAS: a batch of re-encrypting puts (one entry) drops at
// decide a put whose variable changed since it was read, writes the
// others, and is refused as a whole at apply when a write lands between
// decide and apply — so a full rotation never overwrites a newer value.
func TestRekeyBatchCAS(t *testing.T) {
	h := newHarness(t)
	enc := variablestest.NewEncrypter(t)
	kid, _, _ := enc.Encrypt([]byte("x"), nil)
	keyIdx := h.activeKey(kid)
	idx := map[string]uint64{}
	for i := range 3 {
		path := fmt.Sprint("app/v", i)
		if err := h.run(sealed(t, enc, "default", path, variables.Items{"k": fmt.Sprint("old-", i)}, nil)); err != nil {
			t.Fatal(err)
		}
		idx[path] = h.get("default", path).ModifyIndex
	}
	rekeyOf := func(paths ...string) variables.Rekey {
		r := variables.Rekey{KeyID: kid, KeyModifyIndex: keyIdx}
		for _, p := range paths {
			cur := h.get("default", p)
			items, err := variables.Open(enc, "default", p, cur.KeyID, cur.Data)
			if err != nil {
				t.Fatal(err)
			}
			r.Puts = append(r.Puts, sealed(t, enc, "default", p, items, cas(idx[p])))
		}
		return r
	}
	// v1 is rewritten by a user after the rotation read it.
	r := rekeyOf("app/v0", "app/v1", "app/v2")
	if err := h.run(sealed(t, enc, "default", "app/v1", variables.Items{"k": "user"}, nil)); err != nil {
		t.Fatal(err)
	}
	d, err := h.decide(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Events) != 2 {
		t.Fatalf("%d events, want 2 (v1's put dropped at decide)", len(d.Events))
	}
	if err := h.commit(d); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"app/v0": "old-0", "app/v1": "user", "app/v2": "old-2"} {
		cur := h.get("default", p)
		got, err := variables.Open(enc, "default", p, cur.KeyID, cur.Data)
		if err != nil || got["k"] != want {
			t.Fatalf("%s = %v, %v; want %s", p, got, err, want)
		}
	}
	// A write between decide and apply refuses the whole entry.
	for _, p := range []string{"app/v0", "app/v2"} {
		idx[p] = h.get("default", p).ModifyIndex
	}
	d, err = h.decide(rekeyOf("app/v0", "app/v2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.run(sealed(t, enc, "default", "app/v2", variables.Items{"k": "late"}, nil)); err != nil {
		t.Fatal(err)
	}
	before := h.get("default", "app/v0").ModifyIndex
	wantConflict(t, h.commit(d), true, "modify index is")
	if h.get("default", "app/v0").ModifyIndex != before {
		t.Fatal("a refused batch wrote v0")
	}
	cur := h.get("default", "app/v2")
	if got, _ := variables.Open(enc, "default", "app/v2", cur.KeyID, cur.Data); got["k"] != "late" {
		t.Fatalf("v2 = %v, want the late write", got)
	}
	// A rotation after the batch was sealed refuses it at decide, and one
	// between decide and apply refuses it at apply.
	idx["app/v0"] = h.get("default", "app/v0").ModifyIndex
	d, err = h.decide(rekeyOf("app/v0"))
	if err != nil {
		t.Fatal(err)
	}
	h.rotate(kid, "another")
	wantConflict(t, h.commit(d), false, "modify index")
	_, err = h.decide(rekeyOf("app/v0"))
	wantConflict(t, err, false, "no longer the active key")
}

// rotate records root key from inactive and key to active, as a rotation does.
func (h *harness) rotate(from, to string) {
	h.t.Helper()
	if err := h.commit(commands.Decision{Events: []events.Payload{
		&events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: from, Algorithm: "aes256-gcm", State: events.RootKeyInactive}},
		&events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: to, Algorithm: "aes256-gcm", State: events.RootKeyActive}},
	}}); err != nil {
		h.t.Fatal(err)
	}
}

// activeKey records root key id as active and returns its row's modify index.
func (h *harness) activeKey(id string) uint64 {
	h.t.Helper()
	if err := h.commit(commands.Decision{Events: []events.Payload{&events.RootKeyUpserted{
		Key: events.RootKeyMeta{KeyID: id, Algorithm: "aes256-gcm", State: events.RootKeyActive}}}}); err != nil {
		h.t.Fatal(err)
	}
	return h.index
}

// TestRekeyValidate: a batch needs puts, each with cas, each path once,
// at most MaxRekeyPuts; errors name the field.
func TestRekeyValidate(t *testing.T) {
	enc := variablestest.NewEncrypter(t)
	p := sealed(t, enc, "default", "a", variables.Items{"k": "v"}, cas(1))
	kid := p.KeyID
	noCAS := p
	noCAS.CAS = nil
	big := variables.Rekey{KeyID: kid, Puts: make([]variables.Put, variables.MaxRekeyPuts+1)}
	for name, c := range map[string]struct {
		r     variables.Rekey
		field string
	}{
		"empty":     {variables.Rekey{KeyID: kid}, "Puts"},
		"no key":    {variables.Rekey{Puts: []variables.Put{p}}, "KeyID"},
		"other key": {variables.Rekey{KeyID: "other", Puts: []variables.Put{p}}, "KeyID"},
		"no cas":    {variables.Rekey{KeyID: kid, Puts: []variables.Put{noCAS}}, "CAS"},
		"twice":     {variables.Rekey{KeyID: kid, Puts: []variables.Put{p, p}}, "Puts"},
		"big":       {big, "Puts"},
	} {
		err := c.r.Validate()
		var ve *commands.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: %v, want a validation error on %s", name, err, c.field)
		}
	}
	if err := (variables.Rekey{KeyID: kid, Puts: []variables.Put{p}}).Validate(); err != nil {
		t.Fatal(err)
	}
}
