package plan_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
)

// TestRacingPlansForOneStaticPort: workers racing for the same static
// port on one node, each plan computed before any commits (so every one
// thinks the port is free), and verified while earlier ones are still in
// raft: exactly one wins, the others are refused with ReasonPortCollision
// and told to refresh; the node's usage holds the port once.
func TestRacingPlansForOneStaticPort(t *testing.T) {
	const plans = 12
	a, ap := startApplier(t, 100000, "n1")
	for i := range plans {
		withEvals(t, a, fmt.Sprintf("e%02d", i))
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		placed  int
		refused int
	)
	for i := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := onePlacement(fmt.Sprintf("e%02d", i), "n1", 100)
			p.Placements[0].AllocatedResources = &events.AllocatedResources{Shared: events.AllocatedSharedResources{
				Ports: []events.PortMapping{{Label: "http", Value: 8080, HostIP: "127.0.0.1"}}}}
			res, _, err := ap.Submit(context.Background(), p, nil)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			placed += len(res.Placements)
			if len(res.Placements) == 0 {
				refused++
				if res.RefreshIndex == 0 {
					t.Errorf("plan %d refused without a refresh index", i)
				}
				if why := res.Reasons["n1"]; why != plan.ReasonPortCollision && len(res.Reasons) > 0 {
					t.Errorf("plan %d refused for %q, want %q", i, why, plan.ReasonPortCollision)
				}
			}
		}()
	}
	wg.Wait()
	if placed != 1 || refused != plans-1 {
		t.Fatalf("%d plans won port 8080 and %d were refused; want 1 and %d", placed, refused, plans-1)
	}
	snap := a.Store().Snapshot()
	defer snap.Close()
	u, err := allocs.NodeUsage(projections.NewView(snap), "n1")
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Ports) != 1 || u.Ports[0] != 8080 {
		t.Fatalf("node usage holds ports %v, want [8080]", u.Ports)
	}
}
