package commands

import (
	"regexp"
	"testing"
)

// Ids are Nomad-shaped version 4 UUIDs whose 8-character short forms tell
// them apart.
func TestNewUUID(t *testing.T) {
	shape := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	short := map[string]bool{}
	for range 1000 {
		id := NewUUID()
		if !shape.MatchString(id) || short[id[:8]] {
			t.Fatalf("id %q: bad shape, or its short form repeats", id)
		}
		short[id[:8]] = true
	}
	zero := func(b []byte) (int, error) { clear(b); return len(b), nil }
	if got, want := uuidFrom(zero), "00000000-0000-4000-8000-000000000000"; got != want {
		t.Errorf("uuidFrom = %s, want %s", got, want)
	}
}
