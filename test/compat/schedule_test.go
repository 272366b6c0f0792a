package compat

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/testagent"
)

// registerReadyNode registers a node through the client API and reports it ready.
func registerReadyNode(t *testing.T, addr, id string, cpu, mem int) {
	t.Helper()
	testagent.ReadyNode(t, addr, id, cpu, mem)
}

// A job registered with the nomad/api client is scheduled end to end: the
// eval goes through the broker, a worker and the plan applier, and the
// job's allocations land on the ready nodes.
func TestJobIsScheduled(t *testing.T) {
	a, c := startDev(t)
	for i := range 3 {
		registerReadyNode(t, a.HTTPAddr(), fmt.Sprintf("node-%d", i), 1000, 1024)
	}
	resp, _, err := c.Jobs().Register(serviceJob("web", 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 20*time.Second, "the register eval to complete", func() bool {
		ev, _, err := c.Evaluations().Info(resp.EvalID, nil)
		return err == nil && ev.Status == "complete"
	})
	allocs, _, err := c.Jobs().Allocations("web", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(allocs) != 4 {
		t.Fatalf("%d allocations, want 4", len(allocs))
	}
	perNode := map[string]int{}
	for _, al := range allocs {
		if al.DesiredStatus != "run" || al.EvalID != resp.EvalID {
			t.Fatalf("alloc %+v", al)
		}
		perNode[al.NodeID]++
	}
	if len(perNode) < 2 {
		t.Fatalf("all allocations on one node: %v", perNode)
	}

	// Scaling down stops the extras.
	if _, _, err := c.Jobs().Register(serviceJob("web", 1), nil); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 20*time.Second, "scale down to 1", func() bool {
		allocs, _, err := c.Jobs().Allocations("web", false, nil)
		if err != nil {
			return false
		}
		running := 0
		for _, al := range allocs {
			if al.DesiredStatus == "run" {
				running++
			}
		}
		return running == 1
	})

	// A job that cannot fit gets a blocked eval and queued allocations.
	big := serviceJob("big", 1)
	big.TaskGroups[0].Tasks[0].Resources.MemoryMB = pointer(100000)
	bresp, _, err := c.Jobs().Register(big, nil)
	if err != nil {
		t.Fatal(err)
	}
	var blockedID string
	waittest.For(t, 20*time.Second, "a blocked eval for the job that does not fit", func() bool {
		ev, _, err := c.Evaluations().Info(bresp.EvalID, nil)
		if err != nil || ev.Status != "complete" || ev.BlockedEval == "" {
			return false
		}
		blockedID = ev.BlockedEval
		return ev.FailedTGAllocs["web"] != nil
	})
	bl, _, err := c.Evaluations().Info(blockedID, nil)
	if err != nil || bl.Status != "blocked" {
		t.Fatalf("blocked eval %+v, %v", bl, err)
	}
	// A big enough node joining unblocks it and the job is placed there.
	registerReadyNode(t, a.HTTPAddr(), "big-node", 4000, 200000)
	waittest.For(t, 20*time.Second, "the big job placed once capacity arrives", func() bool {
		allocs, _, err := c.Jobs().Allocations("big", false, &api.QueryOptions{})
		return err == nil && len(allocs) == 1 && allocs[0].NodeID == "big-node"
	})
}

// runningByNode counts the job's allocations the servers want running, per node.
func runningByNode(t *testing.T, c *api.Client, job string) map[string]int {
	t.Helper()
	allocs, _, err := c.Jobs().Allocations(job, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, al := range allocs {
		if al.DesiredStatus == "run" && al.ClientStatus != "lost" {
			out[al.NodeID]++
		}
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// A node going down loses its allocations and the job is re-evaluated in
// the same entry: replacements land on the remaining nodes. A drained node
// has its allocations migrated away.
func TestNodeDownAndDrainReplaceAllocations(t *testing.T) {
	a, c := startDev(t)
	for i := range 3 {
		registerReadyNode(t, a.HTTPAddr(), fmt.Sprintf("node-%d", i), 4000, 8192)
	}
	web := serviceJob("web", 6)
	// Nobody reports the replacements running here, so migrations are not
	// paced one at a time (drain_test.go covers pacing): all may move at once.
	six := 6
	web.TaskGroups[0].Migrate = &api.MigrateStrategy{MaxParallel: &six}
	if _, _, err := c.Jobs().Register(web, nil); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 20*time.Second, "6 allocations", func() bool { return total(runningByNode(t, c, "web")) == 6 })
	var victim string
	for n, k := range runningByNode(t, c, "web") {
		if k > 0 {
			victim = n
			break
		}
	}
	ctx := context.Background()
	if _, err := a.Pipeline().Run(ctx, "node.status", commands.Request{Actor: "test"},
		node.UpdateStatus{ID: victim, Status: "down", MissedHeartbeat: true}); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 20*time.Second, "replacements for the down node's allocations", func() bool {
		m := runningByNode(t, c, "web")
		return m[victim] == 0 && total(m) == 6
	})
	allocs, _, err := c.Nodes().Allocations(victim, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, al := range allocs {
		if al.ClientStatus != "lost" || al.DesiredStatus != "stop" {
			t.Fatalf("alloc on the down node: desired %s, client %s", al.DesiredStatus, al.ClientStatus)
		}
	}

	// Drain another node: its allocations migrate to the last one.
	var drained string
	for n, k := range runningByNode(t, c, "web") {
		if k > 0 {
			drained = n
			break
		}
	}
	if _, err := c.Nodes().UpdateDrain(drained, &api.DrainSpec{Deadline: time.Hour}, false, nil); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 20*time.Second, "allocations migrated off the drained node", func() bool {
		m := runningByNode(t, c, "web")
		return m[drained] == 0 && total(m) == 6
	})
}

// A client reporting an allocation failed gets its job re-evaluated: the
// reschedule policy's delay shows as a follow-up eval on the allocation.
func TestFailedAllocationIsRescheduled(t *testing.T) {
	a, c := startDev(t)
	registerReadyNode(t, a.HTTPAddr(), "node-0", 4000, 8192)
	registerReadyNode(t, a.HTTPAddr(), "node-1", 4000, 8192)
	if _, _, err := c.Jobs().Register(serviceJob("web", 1), nil); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 20*time.Second, "one allocation", func() bool { return total(runningByNode(t, c, "web")) == 1 })
	allocs, _, err := c.Jobs().Allocations("web", true, nil)
	if err != nil || len(allocs) != 1 {
		t.Fatalf("allocs %v, %v", allocs, err)
	}
	al := allocs[0]
	body := fmt.Sprintf(`{"Allocs":[{"ID":%q,"ClientStatus":"failed","ClientDescription":"task exited 1"}]}`, al.ID)
	r, _ := http.NewRequest(http.MethodPut, "http://"+a.HTTPAddr()+"/v1/client/"+al.NodeID+"/allocs", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("alloc update: %s", resp.Status)
	}
	waittest.For(t, 20*time.Second, "a follow-up eval for the failed allocation", func() bool {
		got, _, err := c.Allocations().Info(al.ID, nil)
		if err != nil || got.FollowupEvalID == "" {
			return false
		}
		ev, _, err := c.Evaluations().Info(got.FollowupEvalID, nil)
		return err == nil && ev.Status == "pending" && !ev.WaitUntil.IsZero()
	})
}

// N1 end to end: a node running allocations that tolerate disconnects
// becomes disconnected (not down) when it misses its heartbeat, and its
// allocation is unknown; on reconnect it stays initializing until it has
// reported its allocations, then becomes ready and keeps its allocation.
func TestDisconnectedNodeKeepsTolerantAllocation(t *testing.T) {
	a, c := startDev(t)
	registerReadyNode(t, a.HTTPAddr(), "edge-0", 4000, 8192)
	job := serviceJob("edge", 1)
	job.TaskGroups[0].Disconnect = &api.DisconnectStrategy{LostAfter: pointer(time.Hour), Replace: pointer(false)}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 20*time.Second, "the allocation", func() bool { return total(runningByNode(t, c, "edge")) == 1 })
	ctx := context.Background()
	if _, err := a.Pipeline().Run(ctx, "node.status", commands.Request{Actor: "test"},
		node.UpdateStatus{ID: "edge-0", Status: "down", MissedHeartbeat: true}); err != nil {
		t.Fatal(err)
	}
	n, _, err := c.Nodes().Info("edge-0", nil)
	if err != nil || n.Status != "disconnected" {
		t.Fatalf("node after a missed heartbeat: %v, %v", n.Status, err)
	}
	waittest.For(t, 20*time.Second, "the allocation to become unknown", func() bool {
		allocs, _, err := c.Jobs().Allocations("edge", true, nil)
		return err == nil && len(allocs) == 1 && allocs[0].ClientStatus == "unknown"
	})
	// Reconnect: the heartbeat alone leaves it initializing (N1).
	registerReadyNode(t, a.HTTPAddr(), "edge-0", 4000, 8192)
	if n, _, _ := c.Nodes().Info("edge-0", nil); n.Status != "initializing" {
		t.Fatalf("reconnecting node is %s before reporting its allocations", n.Status)
	}
	allocs, _, _ := c.Jobs().Allocations("edge", true, nil)
	orig := allocs[0].ID
	body := fmt.Sprintf(`{"Allocs":[{"ID":%q,"ClientStatus":"running"}]}`, orig)
	r, _ := http.NewRequest(http.MethodPut, "http://"+a.HTTPAddr()+"/v1/client/edge-0/allocs", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	registerReadyNode(t, a.HTTPAddr(), "edge-0", 4000, 8192)
	if n, _, _ := c.Nodes().Info("edge-0", nil); n.Status != "ready" {
		t.Fatalf("node after reporting its allocations: %s", n.Status)
	}
	waittest.For(t, 20*time.Second, "the original allocation kept running", func() bool {
		allocs, _, err := c.Jobs().Allocations("edge", true, nil)
		if err != nil {
			return false
		}
		var live []string
		for _, al := range allocs {
			if al.DesiredStatus == "run" {
				live = append(live, al.ID)
			}
		}
		return len(live) == 1 && live[0] == orig
	})
}
