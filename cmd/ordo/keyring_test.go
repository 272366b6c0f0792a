package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/projections"
	pv "github.com/ordoplane/ordo/projections/variables"
	"github.com/ordoplane/ordo/storage/waittest"
)

// TestKeyringCLI runs ordo operator root keyring list|rotate|remove
// against a dev agent: the first key listed active; rotate makes a new
// active key and the old one inactive; rotate -full re-encrypts the
// variables of the previous key (which ends inactive; the variable reads
// and is under the new key); remove refuses the active key and a key that
// still encrypts variables, naming key_id, removes an inactive one, and a
// missing one is an error; -json lists the API's answer.
func TestKeyringCLI(t *testing.T) {
	a, addr := startJobAgent(t)
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(append(args, "-address", addr)...)
		if code != want {
			t.Fatalf("ordo %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out + errOut
	}
	type key struct{ KeyID, State, Algorithm string }
	keys := func() map[string]key {
		t.Helper()
		var list []key
		if err := json.Unmarshal([]byte(run(0, "operator", "root", "keyring", "list", "-json")), &list); err != nil {
			t.Fatal(err)
		}
		m := map[string]key{}
		for _, k := range list {
			m[k.KeyID] = k
		}
		return m
	}
	waitState := func(id, state string) {
		t.Helper()
		if !waittest.Poll(15*time.Second, func() bool { return keys()[id].State == state }) {
			t.Fatalf("key %s is %q, want %s", id, keys()[id].State, state)
		}
	}
	var first string
	waittest.For(t, 10*time.Second, "the first root key", func() bool {
		for id, k := range keys() {
			if k.State == "active" {
				first = id
			}
		}
		return first != ""
	})
	out := run(0, "operator", "root", "keyring", "list")
	if !regexp.MustCompile(`(?m)^Key\s+State\s+Algorithm\s+Create Time$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^`+first+`\s+active\s+aes256-gcm\s+\d{4}-`).MatchString(out) {
		t.Fatalf("list:\n%s", out)
	}

	run(0, "var", "put", "old/db", "password=first")
	newID := regexp.MustCompile(`New active key (\S+) \(index \d+\)$`)
	m := newID.FindStringSubmatch(strings.TrimSpace(run(0, "operator", "root", "keyring", "rotate")))
	if m == nil {
		t.Fatal("rotate does not name the new key")
	}
	second := m[1]
	if k := keys(); k[second].State != "active" || k[first].State != "inactive" {
		t.Fatalf("after rotate: %+v", k)
	}
	run(0, "var", "put", "app/db", "password=hunter2") // under second

	out = strings.TrimSpace(run(0, "operator", "root", "keyring", "rotate", "-full"))
	if !strings.HasSuffix(out, "; re-encrypting every variable") {
		t.Fatalf("rotate -full: %q", out)
	}
	third := newID.FindStringSubmatch(strings.TrimSuffix(out, "; re-encrypting every variable"))[1]
	waitState(second, "inactive") // the rekey job re-encrypted app/db and marked it
	if got := run(0, "var", "get", "-item", "password", "app/db"); got != "hunter2\n" {
		t.Fatalf("after rotate -full, app/db reads %q", got)
	}
	if x, err := pv.Get(projections.NewView(a.Store()), "default", "app/db"); err != nil || x.KeyID != third {
		t.Fatalf("app/db after rotate -full: %+v %v, want it under %s", x, err, third)
	}

	if out := run(1, "operator", "root", "keyring", "remove", third); !strings.Contains(out, "key_id") || !strings.Contains(out, "active") {
		t.Fatalf("removing the active key: %s", out)
	}
	// first still encrypts old/db (a rotation without -full leaves it).
	if out := run(1, "operator", "root", "keyring", "remove", first); !strings.Contains(out, "key_id") || !strings.Contains(out, "still encrypts 1 variables") {
		t.Fatalf("removing a key with variables: %s", out)
	}
	if out := run(0, "operator", "root", "keyring", "remove", second); !strings.Contains(out, "Removed root key "+second) {
		t.Fatalf("remove: %s", out)
	}
	if _, ok := keys()[second]; ok {
		t.Fatal("removed key still listed")
	}
	run(1, "operator", "root", "keyring", "remove", second)
	run(1, "operator", "root", "keyring", "remove", "not a key id")
}
