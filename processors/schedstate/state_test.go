package schedstate_test

import (
	"testing"

	"github.com/ordoplane/ordo/commands/csi/csitest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/schedstate"
)

// Alloc reads one allocation from the projections by id; an id no
// allocation has is no error.
func TestStateAlloc(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "", nil))
	h.Apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{csitest.Alloc("a1", "web", "n1", 0)}})
	st, err := schedstate.New(h.View())
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := st.Alloc("a1"); !ok || a.ID != "a1" || a.NodeID != "n1" {
		t.Fatalf("Alloc(a1) = %+v, %v", a, ok)
	}
	if a, ok := st.Alloc("a2"); ok {
		t.Fatalf("Alloc(a2) = %+v", a)
	}
	if err := st.Err(); err != nil {
		t.Fatalf("a missing allocation made an error: %v", err)
	}
}
