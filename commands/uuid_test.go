package commands

import (
	"regexp"
	"testing"
	"time"
)

// Ids are Nomad-shaped UUIDs (version 7) and sort in the order they were
// minted across milliseconds.
func TestNewUUID(t *testing.T) {
	shape := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewUUID()
		if !shape.MatchString(id) || seen[id] {
			t.Fatalf("id %q: bad shape or repeated", id)
		}
		seen[id] = true
	}
	zero := func(b []byte) (int, error) { clear(b); return len(b), nil }
	ones := func(b []byte) (int, error) {
		for i := range b {
			b[i] = 0xff
		}
		return len(b), nil
	}
	at := time.UnixMilli(1_700_000_000_000)
	if got, want := uuidAt(at, zero), "018bcfe5-6800-7000-8000-000000000000"; got != want {
		t.Errorf("uuidAt = %s, want %s", got, want)
	}
	if a, b := uuidAt(at, ones), uuidAt(at.Add(time.Millisecond), zero); a >= b {
		t.Errorf("later id %s sorts before %s", b, a)
	}
}
