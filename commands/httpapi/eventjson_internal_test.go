package httpapi

import (
	"os"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// TestEventJSONVersionIsThePayloads: an event archived at an old version
// is shown upcast, and Version names the version its payload now has, so
// a consumer checks it against the right schema (as the mirror's records).
func TestEventJSONVersionIsThePayloads(t *testing.T) {
	data, err := os.ReadFile("../../events/testdata/NamespaceUpserted.v1.msgpack")
	if err != nil {
		t.Fatal(err)
	}
	out, err := archivedEventJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	typ, _ := events.Lookup("NamespaceUpserted")
	if typ.Version < 2 {
		t.Fatalf("NamespaceUpserted is at v%d; the fixture must be older than the type", typ.Version)
	}
	if out.Version != typ.Version {
		t.Errorf("Version %d, want the payload's %d", out.Version, typ.Version)
	}
	ns, ok := out.Payload["Namespace"].(map[string]any)
	if !ok || ns["Name"] != "legacy" {
		t.Errorf("payload %v", out.Payload)
	}
}
