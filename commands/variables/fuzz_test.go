package variables_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/commands/variables/variablestest"
)

// FuzzValidPath: ValidPath never panics, and what it accepts is a path
// the rest of ordo can rely on: URL-safe bytes, no empty segment, within
// the length limit, outside the reserved "nomad/" space but its two
// directories; and a valid path survives the row key split.
func FuzzValidPath(f *testing.F) {
	for _, s := range []string{"a", "app/db", "nomad/jobs/web", "nomad/x", "/a", "a//b", "a.b", "ü", strings.Repeat("p", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if variables.ValidPath("path", path) != nil {
			return
		}
		if len(path) == 0 || len(path) > variables.MaxPathLen || strings.Contains(path, "//") ||
			strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") {
			t.Fatalf("accepted %q", path)
		}
		for _, c := range []byte(path) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_~/", c) >= 0) {
				t.Fatalf("accepted %q with %q", path, c)
			}
		}
		if seg := strings.SplitN(path, "/", 3); seg[0] == "nomad" && (len(seg) < 2 || seg[1] != "jobs" && seg[1] != "job-templates") {
			t.Fatalf("accepted reserved %q", path)
		}
	})
}

// FuzzItems: a put's items decoded from any JSON body never panic
// validation, and valid items seal and open to the same items (decode →
// seal → open → encode → decode is stable).
func FuzzItems(f *testing.F) {
	enc := variablestest.NewEncrypter(f)
	for _, s := range []string{`{"Items":{"k":"v"}}`, `{"Items":{}}`, `{"Items":{"":"v"}}`, `{"Items":{"k":5}}`,
		`{"Items":{"a":"\u0000\ud800","b":"é"}}`, `{"Items":null}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in struct{ Items variables.Items }
		if json.Unmarshal(body, &in) != nil || variables.ValidItems(in.Items) != nil {
			return
		}
		kid, data, err := variables.Seal(enc, "ns", "p", in.Items)
		if err != nil {
			t.Fatal(err)
		}
		out, err := variables.Open(enc, "ns", "p", kid, data)
		if err != nil {
			t.Fatal(err)
		}
		// JSON replaces invalid UTF-8 on encoding: compare after one round trip.
		b, _ := json.Marshal(in.Items)
		var want variables.Items
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("items %q opened as %q", want, out)
		}
	})
}
