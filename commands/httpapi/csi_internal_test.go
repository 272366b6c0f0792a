package httpapi

import (
	"testing"

	"github.com/ordoplane/ordo/commands/csi/csitest"
	"github.com/ordoplane/ordo/events"
	pc "github.com/ordoplane/ordo/projections/csi"
)

// TestVolumeAllocationsNewestFirst (N16): a volume's allocations are
// listed newest modify index first, whatever their ids, and in full.
func TestVolumeAllocationsNewestFirst(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "p1", nil), csitest.Volume("db", events.CSIAccessMultiNodeMultiW),
		csitest.DBJob("app", "db", events.CSIAccessMultiNodeMultiW, false, 3))
	ids := []string{"aaaaaaaa-0000-0000-0000-000000000001", "cccccccc-0000-0000-0000-000000000003", "bbbbbbbb-0000-0000-0000-000000000002"}
	for i, id := range ids {
		h.Apply(&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{csitest.Alloc(id, "app", "n1", i)}})
	}
	// The first one changes last.
	h.Apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: ids[0], ClientStatus: events.AllocClientRunning}}})
	vol, err := pc.GetVolume(h.View(), "default", "db")
	if err != nil {
		t.Fatal(err)
	}
	shape, err := volumeShape(h.View(), vol)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range shape.Allocations {
		got = append(got, a.ID)
	}
	want := []string{ids[0], ids[2], ids[1]}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("allocations %v, want newest first %v", got, want)
	}
	if len(shape.WriteClaims) != 3 || shape.Secrets["token"] != redacted {
		t.Fatalf("claims %d, secrets %v", len(shape.WriteClaims), shape.Secrets)
	}
}
