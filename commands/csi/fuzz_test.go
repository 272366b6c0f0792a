package csi_test

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/commands/csi"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzParseSpec: the volume spec parser never panics, and what it accepts
// survives a JSON round trip through the API's register body unchanged.
func FuzzParseSpec(f *testing.F) {
	f.Add(readFile(f, "testdata/volume.hcl"))
	f.Add([]byte(`{"Volumes":[{"ID":"db","PluginID":"p","Type":"csi","RequestedCapabilities":[{"AccessMode":"single-node-writer","AttachmentMode":"file-system"}]}]}`))
	f.Add([]byte(`id = "x"`))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := csi.ParseSpec("fuzz.hcl", src)
		if err != nil {
			return
		}
		body, err := json.Marshal(s.Body())
		if err != nil {
			t.Fatal(err)
		}
		back, err := csi.ParseSpec("fuzz.json", body)
		if err != nil {
			t.Fatalf("accepted spec fails its own JSON form: %v\n%s", err, body)
		}
		if !reflect.DeepEqual(back, s) {
			t.Fatalf("round trip changed the spec:\n%+v\n%+v", s, back)
		}
	})
}
