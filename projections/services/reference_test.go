package services_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/services"
)

// TestAgainstReference applies random registrations (new, updated,
// renamed, moved to another allocation), deregistrations and cleanups to
// the projection and to a plain map, and checks after every entry that
// the indexes by name, allocation and node list exactly what the map
// holds; a rebuild at the end computes the same tables.
func TestAgainstReference(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 34))
			store := pt.OpenStore(t)
			h := &harness{t: t, f: pt.NewFSM(t, store), v: projections.NewView(store)}
			ref := map[string]events.ServiceRegistration{}
			allocNode := func(a string) string { return "n" + a[1:2] } // a1x runs on n1
			pick := func(list []string) string { return list[rng.IntN(len(list))] }
			names, allocIDs := []string{"web", "db", "api"}, []string{"a1x", "a1y", "a2x", "a3x"}
			for range 200 {
				switch rng.IntN(6) {
				case 0, 1, 2:
					var regs []events.ServiceRegistration
					for range 1 + rng.IntN(3) {
						a := pick(allocIDs)
						r := events.ServiceRegistration{ID: fmt.Sprintf("r%d", rng.IntN(12)), ServiceName: pick(names),
							Namespace: pick([]string{"default", "prod"}), NodeID: allocNode(a), JobID: "j", AllocID: a,
							Address: "10.0.0.1", Port: rng.IntN(3)}
						regs = append(regs, r)
					}
					h.apply(&events.ServicesRegistered{NodeID: "n", Services: regs})
					for _, r := range regs {
						ref[r.ID] = r
					}
				case 3:
					ids := []string{fmt.Sprintf("r%d", rng.IntN(12)), fmt.Sprintf("r%d", rng.IntN(12))}
					h.apply(&events.ServicesDeregistered{IDs: ids})
					for _, id := range ids {
						delete(ref, id)
					}
				case 4:
					a := pick(allocIDs)
					st := pick([]string{events.AllocClientRunning, events.AllocClientComplete, events.AllocClientFailed})
					h.apply(&events.AllocsClientUpdated{NodeID: allocNode(a), Updates: []events.AllocClientUpdate{{ID: a, ClientStatus: st}}})
					if st != events.AllocClientRunning {
						for id, r := range ref {
							if r.AllocID == a {
								delete(ref, id)
							}
						}
					}
				case 5:
					n := pick([]string{"n1", "n2", "n3"})
					h.apply(&events.NodeStatusUpdated{ID: n, Status: events.NodeStatusDown})
					for id, r := range ref {
						if r.NodeID == n {
							delete(ref, id)
						}
					}
				}
				check(t, h.v, ref, names, allocIDs)
			}
			pt.CheckRebuildEqualsLive(t, store, all.Projections()...)
		})
	}
}

func check(t *testing.T, v projections.View, ref map[string]events.ServiceRegistration, names, allocIDs []string) {
	t.Helper()
	want := func(keep func(events.ServiceRegistration) bool) []string {
		out := []string{}
		for id, r := range ref {
			if keep(r) {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, ns := range []string{"default", "prod"} {
		for _, n := range names {
			if got, w := ids(services.ByName(v, ns, n)), want(func(r events.ServiceRegistration) bool { return r.Namespace == ns && r.ServiceName == n }); !reflect.DeepEqual(got, w) {
				t.Fatalf("by name %s/%s = %v, want %v", ns, n, got, w)
			}
		}
	}
	for _, a := range allocIDs {
		if got, w := ids(services.ByAlloc(v, a)), want(func(r events.ServiceRegistration) bool { return r.AllocID == a }); !reflect.DeepEqual(got, w) {
			t.Fatalf("by alloc %s = %v, want %v", a, got, w)
		}
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if got, w := ids(services.ByNode(v, n)), want(func(r events.ServiceRegistration) bool { return r.NodeID == n }); !reflect.DeepEqual(got, w) {
			t.Fatalf("by node %s = %v, want %v", n, got, w)
		}
	}
	for id, r := range ref {
		got, err := services.Get(v, id)
		if err != nil || got.Port != r.Port || got.ServiceName != r.ServiceName || got.AllocID != r.AllocID {
			t.Fatalf("%s = %+v, %v; want %+v", id, got, err, r)
		}
	}
}
