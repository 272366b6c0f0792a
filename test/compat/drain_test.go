package compat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/events"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/testagent"
)

// reportRunning reports, as the client of nodeID would, the allocations
// ids running and healthy.
func reportRunning(t *testing.T, addr, nodeID string, ids []string) {
	t.Helper()
	var ups []string
	for _, id := range ids {
		ups = append(ups, fmt.Sprintf(`{"ID":%q,"ClientStatus":"running","DeploymentStatus":{"Healthy":true}}`, id))
	}
	body := `{"Allocs":[` + strings.Join(ups, ",") + `]}`
	testagent.PutOK(t, addr, "/v1/client/"+nodeID+"/allocs", body)
}

// migratingAlong replays the archive and returns, per applied index, how
// many of the job's allocations were migrating then: marked to migrate
// and not yet replaced by a running allocation (or stopped without one).
func migratingAlong(t *testing.T, evs []*events.Event, job string) (max int, marks int) {
	t.Helper()
	all := map[string]*events.Allocation{}
	count := func() int {
		n := 0
		for _, a := range all {
			if a.JobID != job || a.DesiredTransition.Migrate == nil || !*a.DesiredTransition.Migrate {
				continue
			}
			if a.NextAllocation == "" {
				if !a.Terminal() {
					n++
				}
				continue
			}
			if r := all[a.NextAllocation]; r != nil && !r.Terminal() && r.ClientStatus != events.AllocClientRunning {
				n++
			}
		}
		return n
	}
	for i, ev := range evs {
		p, err := events.Decode(ev)
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *events.AllocsPlaced:
			for _, a := range p.Allocs {
				a := a
				all[a.ID] = &a
				if prev := all[a.PreviousAllocation]; prev != nil {
					prev.NextAllocation = a.ID
				}
			}
		case *events.AllocsDesiredUpdated:
			for _, u := range p.Updates {
				a := all[u.ID]
				if a == nil {
					continue
				}
				if u.DesiredStatus != "" {
					a.DesiredStatus = u.DesiredStatus
				}
				if u.DesiredTransition.Migrate != nil {
					a.DesiredTransition.Migrate = u.DesiredTransition.Migrate
					if a.JobID == job {
						marks++
					}
				}
				if u.ClientStatus != "" {
					a.ClientStatus = u.ClientStatus
				}
			}
		case *events.AllocsClientUpdated:
			for _, u := range p.Updates {
				if a := all[u.ID]; a != nil {
					a.ClientStatus = u.ClientStatus
				}
			}
		}
		if i == len(evs)-1 || evs[i+1].Index != ev.Index {
			max = maxInt(max, count())
		}
	}
	return max, marks
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// TestDrainMigratesOneAtATime drains a node running four allocations of a
// group whose migrate block says max_parallel = 1, with the real drainer
// and scheduler, and plays the client of the other nodes (it starts every
// replacement it is given). The replay of the log shows that no more than
// one allocation was migrating at any index, all four end up elsewhere, and
// the drain completes with the node left ineligible.
func TestDrainMigratesOneAtATime(t *testing.T) {
	a, c := startDev(t)
	registerReadyNode(t, a.HTTPAddr(), "src", 4000, 8192)
	job := serviceJob("web", 4)
	job.TaskGroups[0].Migrate = &api.MigrateStrategy{MaxParallel: pointer(1)}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 20*time.Second, "4 allocations on src", func() bool { return runningByNode(t, c, "web")["src"] == 4 })
	allocsOn := func(nodeID string) []*api.Allocation {
		list, _, err := c.Nodes().Allocations(nodeID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	var ids []string
	for _, al := range allocsOn("src") {
		ids = append(ids, al.ID)
	}
	reportRunning(t, a.HTTPAddr(), "src", ids)
	registerReadyNode(t, a.HTTPAddr(), "dst-1", 4000, 8192)
	registerReadyNode(t, a.HTTPAddr(), "dst-2", 4000, 8192)

	if _, err := c.Nodes().UpdateDrain("src", &api.DrainSpec{Deadline: time.Hour}, false, nil); err != nil {
		t.Fatal(err)
	}
	// Play the destination nodes' client until the drain completes.
	waittest.For(t, 20*time.Second, "the drain to complete", func() bool {
		for _, n := range []string{"dst-1", "dst-2"} {
			var pending []string
			for _, al := range allocsOn(n) {
				if al.DesiredStatus == "run" && al.ClientStatus == "pending" {
					pending = append(pending, al.ID)
				}
			}
			if len(pending) > 0 {
				reportRunning(t, a.HTTPAddr(), n, pending)
			}
		}
		node, _, err := c.Nodes().Info("src", nil)
		return err == nil && !node.Drain && runningByNode(t, c, "web")["src"] == 0
	})
	node, _, err := c.Nodes().Info("src", nil)
	if err != nil {
		t.Fatal(err)
	}
	if node.SchedulingEligibility != "ineligible" || node.DrainStrategy != nil {
		t.Fatalf("drained node: eligibility %s, strategy %+v", node.SchedulingEligibility, node.DrainStrategy)
	}
	if m := runningByNode(t, c, "web"); m["src"] != 0 || m["dst-1"]+m["dst-2"] != 4 {
		t.Fatalf("allocations by node after the drain: %v", m)
	}
	max, marks := migratingAlong(t, pt.Archived(t, a.Store()), "web")
	if max != 1 || marks != 4 {
		t.Fatalf("at most %d allocations migrating at once (want 1), %d marked (want 4)", max, marks)
	}
}
