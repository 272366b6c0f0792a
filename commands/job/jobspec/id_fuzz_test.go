package jobspec_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ordoplane/ordo/commands/job/jobspec"
)

// FuzzValidID: ValidID never panics, and what it accepts can travel in a
// URL path and name no other resource: bounded, printable UTF-8 without
// spaces, and no empty, "." or ".." segment.
func FuzzValidID(f *testing.F) {
	for _, s := range []string{"web", "../../x", "a/b", "web/periodic-1700000000", "..", "a b", "a\x00", "\xff", strings.Repeat("j", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if jobspec.ValidID("id", id) != nil {
			return
		}
		if id == "" || len(id) > jobspec.MaxIDLength || !utf8.ValidString(id) {
			t.Fatalf("accepted %q", id)
		}
		for _, c := range id {
			if c == ' ' || !unicode.IsPrint(c) {
				t.Fatalf("accepted %q with %U", id, c)
			}
		}
		for _, seg := range strings.Split(id, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted %q with segment %q", id, seg)
			}
		}
	})
}
