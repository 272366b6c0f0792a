package allocs_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestManyAllocsPerEventAsOneAtATime: an event that changes many
// allocations leaves the rows that its changes one at a time leave (the
// same entry, one allocation an event): usage and signing counts are
// read and written once per event, yet rows removed and written again
// within it are created anew, rows written and removed again leave the
// table changed, and ports move as each allocation moves them.
func TestManyAllocsPerEventAsOneAtATime(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	grouped, split := pt.OpenStore(t), pt.OpenStore(t)
	fg, fs := pt.NewFSM(t, grouped, allocs.Projection{}), pt.NewFSM(t, split, allocs.Projection{})
	nodes, keys := []string{"n1", "n2", "n3"}, []string{"", "k1", "k2"}
	type placed struct {
		node string
		live bool
	}
	known := map[string]*placed{}
	ids := func() []string { // sorted, so the test is deterministic
		var out []string
		for i := range 40 {
			if id := fmt.Sprint("a", i); known[id] != nil {
				out = append(out, id)
			}
		}
		return out
	}
	for index := uint64(1); index <= 60; index++ {
		var evs []events.Payload
		var one []events.Payload
		n := 1 + rng.Intn(8)
		switch kind := rng.Intn(4); {
		case kind <= 1 || len(known) == 0:
			var as []events.Allocation
			for range n {
				// New allocations, and known ones placed again, on
				// their node or moved to another.
				id := fmt.Sprint("a", rng.Intn(40))
				a := alloc(id, nodes[rng.Intn(len(nodes))], "web", "e1")
				a.Resources.CPU = 100 * (1 + rng.Intn(3))
				a.SigningKeyID = keys[rng.Intn(len(keys))]
				if rng.Intn(3) == 0 {
					a.AllocatedResources = &events.AllocatedResources{Shared: events.AllocatedSharedResources{
						Ports: []events.PortMapping{{Label: "http", Value: 20000 + rng.Intn(4)}}}}
				}
				as = append(as, a)
				known[id] = &placed{node: a.NodeID, live: true}
				one = append(one, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{a}})
			}
			evs = append(evs, &events.AllocsPlaced{EvalID: "e1", Allocs: as})
		case kind == 2:
			var us []events.AllocDesiredUpdate
			have := ids()
			for range n {
				id := have[rng.Intn(len(have))]
				u := events.AllocDesiredUpdate{ID: id, DesiredStatus: events.AllocDesiredStop}
				us = append(us, u)
				one = append(one, &events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{u}})
			}
			evs = append(evs, &events.AllocsDesiredUpdated{Updates: us})
		default:
			var del []string
			have := ids()
			for range n {
				id := have[rng.Intn(len(have))]
				del = append(del, id)
				one = append(one, &events.AllocsDeleted{IDs: []string{id}})
			}
			for _, id := range del {
				delete(known, id)
			}
			evs = append(evs, &events.AllocsDeleted{IDs: del})
		}
		cmd := fmt.Sprint("c", index)
		if r := pt.ApplyOne(t, fg, index, pt.Entry(t, cmd, evs...)); r.Err != nil {
			t.Fatalf("entry %d: %v", index, r.Err)
		}
		if r := pt.ApplyOne(t, fs, index, pt.Entry(t, cmd, one...)); r.Err != nil {
			t.Fatalf("entry %d, one at a time: %v", index, r.Err)
		}
		projs := []projections.Projection{allocs.Projection{}}
		if g, s := pt.Checksums(t, grouped, projs), pt.Checksums(t, split, projs); g != nil && g["allocs"] != s["allocs"] {
			for _, table := range []string{allocs.UsageTable, allocs.SigningKeyLiveTable} {
				t.Logf("%s: %v", table, rows(t, projections.NewView(grouped), table))
				t.Logf("%s one at a time: %v", table, rows(t, projections.NewView(split), table))
			}
			t.Fatalf("entry %d (%T): the rows differ from those of its changes one at a time", index, evs[0])
		}
	}
}

// rows renders a table's rows: key, create and modify index, value.
func rows(t *testing.T, v projections.View, table string) []string {
	t.Helper()
	var out []string
	if err := v.Scan(table, "", false, func(k string, r projections.Row) error {
		out = append(out, fmt.Sprintf("%s@%d/%d=%x", k, r.CreateIndex, r.ModifyIndex, r.Value))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
