package allocs_test

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// The per-node usage always equals the sum over the node's live allocs.
func TestNodeUsageFollowsLiveAllocs(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, allocs.Projection{})
	mk := func(id, node string, cpu int) events.Allocation {
		a := alloc(id, node, "web", "e1")
		a.Resources = events.Resources{CPU: cpu, MemoryMB: cpu / 10}
		return a
	}
	check := func(node string, cpu, n int) {
		t.Helper()
		u, err := allocs.NodeUsage(projections.NewView(store), node)
		if err != nil {
			t.Fatal(err)
		}
		if u.Resources.CPU != cpu || u.Resources.MemoryMB != cpu/10 || u.Allocs != n {
			t.Fatalf("node %s usage %+v, want cpu %d in %d allocs", node, u, cpu, n)
		}
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{
		mk("a", "n1", 100), mk("b", "n1", 200), mk("c", "n2", 300)}}))
	check("n1", 300, 2)
	check("n2", 300, 1)
	// Stopping one frees it; a client reporting another complete frees that.
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{
		{ID: "a", DesiredStatus: events.AllocDesiredStop}}}))
	check("n1", 200, 1)
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.AllocsClientUpdated{NodeID: "n2", Updates: []events.AllocClientUpdate{
		{ID: "c", ClientStatus: events.AllocClientComplete}}}))
	check("n2", 0, 0)
	// A transition that keeps it running changes nothing; deleting frees it.
	yes := true
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{
		{ID: "b", DesiredTransition: events.DesiredTransition{Migrate: &yes}}}}))
	check("n1", 200, 1)
	pt.ApplyOne(t, f, 5, pt.Entry(t, "c5", &events.AllocsDeleted{IDs: []string{"a", "b"}}))
	check("n1", 0, 0)
}

// A client update of a live allocation leaves its node's usage row, and
// the usage table's index, as they were: nothing a scheduler weighs
// changed (N15). Re-placing it with other resources on the same node
// moves the usage by the difference, on another node moves it across.
func TestNodeUsageUnchangedByClientUpdates(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, allocs.Projection{})
	a := alloc("a", "n1", "web", "e1")
	a.Resources = events.Resources{CPU: 100, MemoryMB: 64}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{a}}))
	row := func(node string) projections.Row {
		t.Helper()
		r, err := projections.NewView(store).Get(allocs.UsageTable, node)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tableIndex := func() uint64 {
		t.Helper()
		i, err := projections.NewView(store).TableIndex(allocs.UsageTable)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	for i, st := range []string{events.AllocClientRunning, events.AllocClientRunning} {
		pt.ApplyOne(t, f, uint64(2+i), pt.Entry(t, fmt.Sprint("c", 2+i), &events.AllocsClientUpdated{NodeID: "n1",
			Updates: []events.AllocClientUpdate{{ID: "a", ClientStatus: st}}}))
	}
	if r := row("n1"); r.CreateIndex != 1 || r.ModifyIndex != 1 || tableIndex() != 1 {
		t.Errorf("after client updates: usage row created %d, modified %d, table index %d; want 1, 1, 1",
			r.CreateIndex, r.ModifyIndex, tableIndex())
	}
	a.Resources = events.Resources{CPU: 300, MemoryMB: 64}
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{a}}))
	if u, err := allocs.NodeUsage(projections.NewView(store), "n1"); err != nil || u.Resources.CPU != 300 || u.Allocs != 1 {
		t.Fatalf("re-placed with 300 MHz: %+v, %v", u, err)
	}
	if r := row("n1"); r.CreateIndex != 1 || r.ModifyIndex != 4 || tableIndex() != 4 {
		t.Errorf("after a change of resources: created %d, modified %d, table index %d; want 1, 4, 4", r.CreateIndex, r.ModifyIndex, tableIndex())
	}
	a.NodeID = "n2"
	pt.ApplyOne(t, f, 5, pt.Entry(t, "c5", &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{a}}))
	if u, err := allocs.NodeUsage(projections.NewView(store), "n2"); err != nil || u.Resources.CPU != 300 || u.Allocs != 1 {
		t.Fatalf("moved to n2: %+v, %v", u, err)
	}
	if _, err := projections.NewView(store).Get(allocs.UsageTable, "n1"); err == nil {
		t.Error("n1 keeps a usage row with no allocation left")
	}
}
