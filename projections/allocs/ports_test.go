package allocs_test

import (
	"slices"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// The per-node usage lists the host ports of the node's live allocations,
// ascending: a placement adds its ports, a stop or a client's terminal
// status frees them, and a port listed twice frees one holder at a time.
// Replaying the archive rebuilds the same rows.
func TestNodeUsagePortsFollowLiveAllocs(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, allocs.Projection{})
	mk := func(id string, ports ...int) events.Allocation {
		a := alloc(id, "n1", "web", "e1")
		if len(ports) > 0 {
			a.AllocatedResources = &events.AllocatedResources{}
			for _, p := range ports {
				a.AllocatedResources.Shared.Ports = append(a.AllocatedResources.Shared.Ports, events.PortMapping{Label: "p", Value: p})
			}
		}
		return a
	}
	check := func(want ...int) {
		t.Helper()
		u, err := allocs.NodeUsage(projections.NewView(store), "n1")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(u.Ports, want) {
			t.Fatalf("ports %v, want %v", u.Ports, want)
		}
		for _, p := range want {
			if !u.HasPort(p) {
				t.Fatalf("HasPort(%d) is false", p)
			}
		}
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{
		mk("a", 9000, 20001), mk("b", 20500), mk("c"), mk("d", 9000)}}))
	check(9000, 9000, 20001, 20500)
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{
		{ID: "d", DesiredStatus: events.AllocDesiredStop}}}))
	check(9000, 20001, 20500)
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{
		{ID: "a", ClientStatus: events.AllocClientComplete}}}))
	check(20500)
	pt.CheckRebuildEqualsLive(t, store, allocs.Projection{})
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.AllocsDeleted{IDs: []string{"b", "c"}}))
	check()
	pt.CheckRebuildEqualsLive(t, store, allocs.Projection{})
}
