package httpapi_test

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands/httpapi"
)

// FuzzValidCommandID: ValidCommandID never panics, and what it accepts is
// at most MaxCommandIDLen bytes of printable ASCII.
func FuzzValidCommandID(f *testing.F) {
	for _, s := range []string{"", "k", "bad-malformed JSON", "a\x00b", "clé", "\x7f", strings.Repeat("k", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if httpapi.ValidCommandID("Idempotency-Key", id) != nil {
			return
		}
		if len(id) > httpapi.MaxCommandIDLen {
			t.Fatalf("accepted %d bytes", len(id))
		}
		for i := 0; i < len(id); i++ {
			if id[i] < ' ' || id[i] > '~' {
				t.Fatalf("accepted %q with byte %q", id, id[i])
			}
		}
	})
}
