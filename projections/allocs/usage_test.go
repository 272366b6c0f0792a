package allocs_test

import (
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
