package variables_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ordoplane/ordo/commands/variables"
)

// FuzzValidItemKey: ValidItemKey never panics, and what it accepts is a
// non-empty, bounded, printable UTF-8 key.
func FuzzValidItemKey(f *testing.F) {
	for _, s := range []string{"k", "", "\x00", "a\nb", "clé", "\xff", "a b", strings.Repeat("k", 257)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if variables.ValidItemKey("Items", key) != nil {
			return
		}
		if key == "" || len(key) > variables.MaxItemKeyLen || !utf8.ValidString(key) {
			t.Fatalf("accepted %q", key)
		}
		for _, c := range key {
			if !unicode.IsPrint(c) {
				t.Fatalf("accepted %q with %U", key, c)
			}
		}
	})
}
