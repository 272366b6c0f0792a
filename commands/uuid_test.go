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
	for range 200 {
		id := NewUUID()
		if !shape.MatchString(id) || short[id[:8]] {
			t.Fatalf("id %q: bad shape, or its short form repeats", id)
		}
		short[id[:8]] = true
	}
}
