// This file holds the end-to-end test of BEHAVIOURS.md N1 (reconnect
// ordering) against a real agent whose scheduler races the reconnect.

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/test/testagent"
)

const (
	nodeA = "node-a" // runs the tolerant allocation, disconnects, reconnects
	nodeB = "node-b" // takes the replacement and fills up

	// waitTimeout bounds every wait; a failure guard, not a pace.
	waitTimeout = 20 * time.Second

	descReconnected = "alloc not needed as the original allocation reconnected"
)

// TestN1ReconnectRacingScheduler: node A runs a service allocation whose
// group tolerates disconnects (lost_after 1h, replace); it misses its
// heartbeat and becomes disconnected, the allocation unknown and replaced
// on B. Then A's client makes its three reconnect calls — register, status
// ready, alloc update — in every order, while job registrations and
// scale-ups keep the scheduler wanting room that only A has. The log must
// show no allocation placed on A (or any node) unless it was ready at that
// index; register never changes A's status; A is ready only once it has
// updated its allocations after the missed heartbeat, and ends ready; the
// reconnected allocation is kept and its replacement stopped. Every eval a
// worker decided while A was not ready is re-run against its snapshot
// (history/rerun): it must reproduce and place nothing on A.
func TestN1ReconnectRacingScheduler(t *testing.T) {
	for _, order := range commandstest.Permutations([]string{"register", "ready", "allocs"}) {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			t.Parallel() // each order has its own agent; their waits overlap
			reconnectRacingScheduler(t, order)
		})
	}
}

func reconnectRacingScheduler(t *testing.T, order []string) {
	a, c := startAgent(t)
	nodeUp(t, a, nodeA, "1")
	edge := job("service", "edge", 1, 100)
	edge.TaskGroups[0].Disconnect = &api.DisconnectStrategy{LostAfter: new(time.Hour), Replace: new(true)}
	register(t, c, edge)
	settle(t, a)
	orig := liveAllocs(t, a, "edge")
	if len(orig) != 1 || orig[0].NodeID != nodeA {
		t.Fatalf("edge allocations %v, want one on %s", orig, nodeA)
	}
	origID := orig[0].ID
	nodeUp(t, a, nodeB, "1")

	// A misses its heartbeat (the heartbeat monitor's call).
	if _, err := a.Pipeline().Run(context.Background(), "node.status", commands.Request{Actor: "test"},
		node.UpdateStatus{ID: nodeA, Status: events.NodeStatusDown, MissedHeartbeat: true}); err != nil {
		t.Fatal(err)
	}
	if s := nodeStatus(t, a, nodeA); s != events.NodeStatusDisconnected {
		t.Fatalf("%s after a missed heartbeat is %s", nodeA, s)
	}
	settle(t, a)
	var replacement string
	for _, al := range liveAllocs(t, a, "edge") {
		switch {
		case al.ID == origID && al.ClientStatus != events.AllocClientUnknown:
			t.Fatalf("original allocation is %s on the disconnected node", al.ClientStatus)
		case al.ID != origID && al.NodeID == nodeB:
			replacement = al.ID
		}
	}
	if replacement == "" {
		t.Fatalf("no replacement on %s", nodeB)
	}
	// B fills up: from here on only A has room.
	register(t, c, job("service", "load-0", 4, 200))
	settle(t, a)

	// The stream: job registrations and scale-ups, a batch made
	// concurrently with each reconnect call.
	stream := [][]*api.Job{
		{job("service", "load-1", 2, 200), job("service", "load-0", 5, 200)},
		{job("service", "load-2", 1, 200), job("service", "load-1", 3, 200)},
		{job("service", "load-3", 1, 200), job("service", "load-2", 2, 200)},
	}
	batches, done := make(chan []*api.Job), make(chan error, 1)
	defer close(batches)
	go func() {
		for b := range batches {
			var err error
			for _, j := range b {
				if _, _, err = c.Jobs().Register(j, nil); err != nil {
					err = fmt.Errorf("register %s: %w", *j.ID, err)
					break
				}
			}
			done <- err
		}
	}()
	streamFrom := a.FSM().Applied()
	for i, step := range order {
		before := nodeStatus(t, a, nodeA)
		batches <- stream[i]
		switch step {
		case "register":
			// A restarted client registers again (a changed attribute, so
			// the registration is recorded).
			nodeRegister(t, a, nodeA, "2")
			if after := nodeStatus(t, a, nodeA); after != before {
				t.Fatalf("register changed %s's status: %s -> %s", nodeA, before, after)
			}
		case "ready":
			put(t, a, "/v1/client/"+nodeA+"/heartbeat", `{"Status":"ready"}`)
		case "allocs":
			put(t, a, "/v1/client/"+nodeA+"/allocs", fmt.Sprintf(`{"Allocs":[{"ID":%q,"ClientStatus":"running"}]}`, origID))
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		settle(t, a)
	}
	// The client keeps heartbeating.
	put(t, a, "/v1/client/"+nodeA+"/heartbeat", `{"Status":"ready"}`)
	settle(t, a)

	if s := nodeStatus(t, a, nodeA); s != events.NodeStatusReady {
		t.Fatalf("%s ends %s", nodeA, s)
	}
	snap := a.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	for id, want := range map[string]struct{ desired, client, desc string }{
		origID:      {events.AllocDesiredRun, events.AllocClientRunning, ""},
		replacement: {events.AllocDesiredStop, "", descReconnected},
	} {
		al, err := allocs.Get(v, id)
		if err != nil {
			t.Fatal(err)
		}
		if al.DesiredStatus != want.desired || (want.client != "" && al.ClientStatus != want.client) ||
			(want.desc != "" && al.DesiredDescription != want.desc) {
			t.Errorf("alloc %s on %s: desired %s (%q), client %s; want desired %s (%q), client %s",
				id, al.NodeID, al.DesiredStatus, al.DesiredDescription, al.ClientStatus, want.desired, want.desc, want.client)
		}
	}

	h := walkN1(t, snap)
	for _, p := range h.violations {
		t.Error(p)
	}
	if got := h.Status[nodeA]; got != events.NodeStatusReady {
		t.Errorf("the archive ends with %s %s", nodeA, got)
	}
	if h.placedOnAReady == 0 {
		t.Errorf("nothing was placed on %s once ready: the stream never needed it", nodeA)
	}
	checkDecisions(t, snap, v, h, streamFrom)
}

// checkDecisions re-runs every eval decided while A was not ready after
// it disconnected: each must reproduce its committed plan and place
// nothing on A. At least one decided during the reconnect calls must have
// wanted room it could not find (the race was run).
func checkDecisions(t *testing.T, snap kv.Reader, v projections.View, h *n1History, streamFrom uint64) {
	t.Helper()
	raced, rerunCount := 0, 0
	err := evals.Scan(v, evals.Query{}, func(e *evals.Eval) error {
		if e.Status != events.EvalStatusComplete || e.SnapshotIndex < h.disconnectedAt || h.StatusAt(nodeA, e.SnapshotIndex) == events.NodeStatusReady {
			return nil
		}
		if e.SnapshotIndex > streamFrom && len(e.FailedTGAllocs) > 0 {
			raced++
		}
		rec, err := rerun.Recorded(snap, e.ID)
		if err != nil {
			return err
		}
		plan, err := rerun.Rerun(snap, e.ID, t.TempDir())
		if err != nil {
			return err
		}
		rerunCount++
		if d := rerun.Diff(rec, plan); !d.Empty() {
			t.Errorf("eval %s decided while %s was %s does not reproduce:\n%s", e.ID, nodeA, h.StatusAt(nodeA, e.SnapshotIndex), d)
		}
		for _, p := range plan.Placements {
			if p.NodeID == nodeA {
				t.Errorf("eval %s placed %s on %s while it was %s (snapshot %d)", e.ID, p.Name, nodeA, h.StatusAt(nodeA, e.SnapshotIndex), e.SnapshotIndex)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if raced == 0 {
		t.Errorf("no eval with failed placements was decided while %s was not ready during the reconnect", nodeA)
	}
	t.Logf("%d evals decided while %s was not ready re-run, %d of them short of room during the reconnect", rerunCount, nodeA, raced)
}

// n1History is what walking the archive found.
type n1History struct {
	*testagent.NodeWalk
	disconnectedAt uint64 // when A first disconnected
	placedOnAReady int
	violations     []string
}

// walkN1 replays the archive, tracking every node's status as the nodes
// projection does, and checks each placement against its node's status at
// that index, and each return to ready against N1's index rule.
func walkN1(t *testing.T, r kv.Reader) *n1History {
	t.Helper()
	h := &n1History{}
	missed, allocUpdate := map[string]uint64{}, map[string]uint64{}
	h.NodeWalk = testagent.WalkNodes(t, r, func(w *testagent.NodeWalk, index uint64, p any) {
		switch p := p.(type) {
		case *events.NodeStatusUpdated:
			if p.MissedHeartbeat {
				missed[p.ID] = index
				if p.ID == nodeA && h.disconnectedAt == 0 {
					h.disconnectedAt = index
				}
			}
			if p.Status == events.NodeStatusReady && missed[p.ID] > 0 {
				if allocUpdate[p.ID] <= missed[p.ID] {
					h.violations = append(h.violations, fmt.Sprintf("index %d: %s ready with its last alloc update at %d, not after the missed heartbeat at %d",
						index, p.ID, allocUpdate[p.ID], missed[p.ID]))
				}
				missed[p.ID] = 0
			}
		case *events.NodeAllocsUpdated:
			allocUpdate[p.ID] = index
		case *events.AllocsPlaced:
			for _, al := range p.Allocs {
				if s := w.Status[al.NodeID]; s != events.NodeStatusReady {
					h.violations = append(h.violations, fmt.Sprintf("index %d: eval %s placed %s on %s while it was %s",
						index, p.EvalID, al.Name, al.NodeID, s))
				} else if al.NodeID == nodeA && h.disconnectedAt > 0 {
					h.placedOnAReady++
				}
			}
		}
	})
	return h
}

// startAgent starts a one-server agent with the scheduler on, data on disk
// in a temp dir, and heartbeat TTLs long enough that no node goes down
// unless the test says so.
// put makes a client API call, as a node's client does.
func put(t *testing.T, a *agent.Agent, path, body string) {
	t.Helper()
	testagent.PutOK(t, a.HTTPAddr(), path, body)
}

func nodeRegister(t *testing.T, a *agent.Agent, id, boot string) {
	t.Helper()
	put(t, a, "/v1/client/register", fmt.Sprintf(`{"ID":%q,"Name":%q,"Datacenter":"dc1","NodeClass":"edge",`+
		`"Attributes":{"kernel.name":"linux","boot":%q},"Resources":{"CPU":1000,"MemoryMB":1024,"DiskMB":10000},`+
		`"Drivers":{"exec":{"Detected":true,"Healthy":true}}}`, id, id, boot))
}

// nodeUp registers a node and reports it ready.
func nodeUp(t *testing.T, a *agent.Agent, id, boot string) {
	t.Helper()
	nodeRegister(t, a, id, boot)
	put(t, a, "/v1/client/"+id+"/heartbeat", `{"Status":"ready"}`)
}

func nodeStatus(t *testing.T, a *agent.Agent, id string) string {
	t.Helper()
	snap := a.Store().Snapshot()
	defer snap.Close()
	n, err := nodes.Get(projections.NewView(snap), id)
	if err != nil {
		t.Fatal(err)
	}
	return n.Status
}

// liveAllocs returns the job's allocations the servers want running.
func liveAllocs(t *testing.T, a *agent.Agent, jobID string) []*allocs.Alloc {
	t.Helper()
	snap := a.Store().Snapshot()
	defer snap.Close()
	list, err := allocs.ByJob(projections.NewView(snap), "default", jobID)
	if err != nil {
		t.Fatal(err)
	}
	var out []*allocs.Alloc
	for _, al := range list {
		if al.DesiredStatus == events.AllocDesiredRun {
			out = append(out, al)
		}
	}
	return out
}
