// This file holds the client half of BEHAVIOURS.md N1 end to end:
// real client agents (client.Client, mock driver) run against an
// in-process dev server with short heartbeat TTLs, and one of them is cut
// off from the servers at its HTTP transport.
//
// The cut client misses its heartbeat, its node becomes disconnected, its
// allocations unknown, and replacements are placed on the other clients
// (or, past lost_after, its allocations are lost). While cut off its tasks
// keep running. It is then reconnected with its register, heartbeat and
// alloc-update calls let through in a chosen order, and the tests check
// that exactly count allocations run afterwards, that the originals kept
// running (or were stopped by their client once lost), that each
// replacement was stopped and reported complete, and, walking the
// archive, that nothing was ever placed on a node that was not ready.
//
// # Usage
//
//	go test -race -run '^Test(ReconnectKeepsOriginals|DisconnectOutlastsLostAfter|LateHeartbeatReconnects)$' ./test/client/
//
// The files disconnect_*_test.go hold the cluster of clients, the cut
// transport (gate), the recording driver and the archive walk.
//
// # Concurrency
//
// Each test starts its own server and clients and runs them alone; the
// cut transport (disconnect_gate_test.go) is safe for the clients' concurrent calls.
//
// # Invariants
//
//   - No sleep synchronises anything: tests wait on a condition with a
//     deadline (a failure guard), and the cut client's mock tasks follow a
//     manual clock the test advances.
//   - The client and server code run unchanged: a client is cut off only
//     through the http.Client its Config takes.

package client

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/test/testagent"
)

// sideRunFor is how long the side job's task runs by its node's clock.
const sideRunFor = time.Minute

// reconnectCase is one way node A's client comes back.
type reconnectCase struct {
	name string
	// tolerate sets how the group tolerates disconnects.
	tolerate func(tg *api.TaskGroup)
	// restart restarts A's client process while it is cut off: the new
	// process re-attaches to the tasks and registers before anything else.
	restart bool
	// queued runs a batch allocation on A that completes while A is cut
	// off, so an alloc update is waiting when A comes back.
	queued bool
	// order is the order in which the gate lets A's register, heartbeat
	// and alloc-update calls through; nil lets everything through at once,
	// in whatever order the client makes its calls. Kinds not listed (the
	// client makes no such call) are let through at the end.
	order []gateCall
}

// replaceAfterHour is the newer disconnect block: unknown for an hour,
// replaced meanwhile.
func replaceAfterHour(tg *api.TaskGroup) {
	tg.Disconnect = &api.DisconnectStrategy{LostAfter: new(time.Hour), Replace: new(true)}
}

// maxClientDisconnect is the older form: max_client_disconnect (replaced
// meanwhile).
func maxClientDisconnect(tg *api.TaskGroup) { tg.MaxClientDisconnect = new(time.Hour) }

// TestReconnectKeepsOriginals is the client half of N1: node A runs two of
// a service job's four allocations, node B the other two, and node C is
// empty. A is cut off from the servers; it misses its heartbeat, becomes
// disconnected, its allocations unknown, and two replacements run on C,
// while A's tasks keep running. A then reconnects, its calls let through
// in the case's order. Afterwards exactly four allocations run: A's
// originals (the same ids, never restarted) and B's; each replacement is
// stopped and reported complete by C; A is ready; and nothing was ever
// placed on a node that was not ready.
func TestReconnectKeepsOriginals(t *testing.T) {
	t.Parallel()
	cases := []reconnectCase{
		{name: "register first", tolerate: replaceAfterHour, restart: true,
			order: []gateCall{callRegister, callHeartbeat, callAllocs}},
		{name: "register first, alloc update before heartbeat", tolerate: replaceAfterHour, restart: true,
			order: []gateCall{callRegister, callAllocs, callHeartbeat}},
		{name: "heartbeat first", tolerate: replaceAfterHour,
			order: []gateCall{callHeartbeat, callAllocs}},
		{name: "alloc update first", tolerate: replaceAfterHour, queued: true,
			order: []gateCall{callAllocs, callHeartbeat}},
		{name: "as the client makes them", tolerate: replaceAfterHour, queued: true},
		{name: "max_client_disconnect", tolerate: maxClientDisconnect,
			order: []gateCall{callHeartbeat, callAllocs}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own cluster; their waits overlap
			reconnect(t, tc)
		})
	}
}

func reconnect(t *testing.T, tc reconnectCase) {
	cl, a, b, c, origA, origB := setup(t, tc.tolerate)

	var side string
	if tc.queued {
		cl.register(pinnedJob("side", a.name, true, sideRunFor))
		cl.waitState("the side allocation running on "+a.name, func(v projections.View) bool {
			list := jobAllocs(t, v, "side")
			return len(list) == 1 && list[0].NodeID == a.id() && list[0].ClientStatus == events.AllocClientRunning
		})
		cl.view(func(v projections.View) { side = jobAllocs(t, v, "side")[0].ID })
	}

	replacements := cutOff(t, cl, a, c, origA)
	wantsA(t, cl, a, "pinned")
	if tc.restart {
		cl.restart(a)
		testagent.WaitFor(t, waitTimeout, "the restarted client to re-attach to its tasks", func() bool {
			for _, id := range origA {
				if _, ok := a.client().Runner(id); !ok || len(a.rec.handles(id)) != 2 {
					return false
				}
			}
			return true
		})
	}
	checkRunningLocally(t, a, origA)
	if tc.queued {
		// The side task ends while A is cut off: its update is queued.
		a.clock.Advance(sideRunFor)
		testagent.WaitFor(t, waitTimeout, "the side allocation to complete on "+a.name, func() bool {
			r, ok := a.client().Runner(side)
			if !ok {
				return false
			}
			u, _ := r.ClientUpdate()
			return u.ClientStatus == events.AllocClientComplete
		})
		if s := cl.nodeStatus(a); s != events.NodeStatusDisconnected {
			t.Fatalf("%s is %s while cut off", a.name, s)
		}
	}

	// Reconnect, the calls in the case's order (hold also starts the
	// record of the calls answered).
	a.gate.hold()
	if tc.order == nil {
		a.gate.open()
	}
	var heartbeatDone, allocsDone bool
	pinned := []string{"pinned"}
	for _, k := range tc.order {
		a.gate.waitHeld(t, k)
		before := cl.nodeStatus(a)
		a.gate.release(k)
		a.gate.waitAnswered(t, k)
		after := cl.nodeStatus(a)
		switch k {
		case callRegister:
			if after != before {
				t.Errorf("register moved %s from %s to %s", a.name, before, after)
			}
		case callHeartbeat:
			heartbeatDone = true
			// Held: no other call of A's can have reached the servers.
			want := events.NodeStatusInitializing
			if allocsDone {
				want = events.NodeStatusReady
			}
			if after != want {
				t.Errorf("%s after its heartbeat (alloc update made: %v) is %s, want %s", a.name, allocsDone, after, want)
			}
			if !allocsDone {
				// A stays initializing while its alloc update is held:
				// the scheduler must not place there meanwhile.
				wantsA(t, cl, a, "pinned-initializing")
				pinned = append(pinned, "pinned-initializing")
			}
		case callAllocs:
			allocsDone = true
			if !heartbeatDone && after != events.NodeStatusDisconnected {
				t.Errorf("%s after an alloc update alone is %s, want %s", a.name, after, events.NodeStatusDisconnected)
			}
		}
	}
	a.gate.open()
	cl.waitNode(a, events.NodeStatusReady)

	checkKept(t, cl, a, c, origA, origB, replacements)
	placedOnA(t, cl, a, pinned...)
	if tc.queued {
		cl.view(func(v projections.View) {
			if al := jobAllocs(t, v, "side")[0]; al.ClientStatus != events.AllocClientComplete {
				t.Errorf("side allocation %s, want complete", al.ClientStatus)
			}
		})
	}

	h := checkHistory(t, cl, a, b, c)
	t.Logf("%s went %v; its calls once reconnected: %s", a.name, h.Changes[a.id()], strings.Join(a.gate.answers(), ", "))
	if tc.order != nil {
		path := []string{events.NodeStatusDisconnected, events.NodeStatusReady}
		if slices.Index(tc.order, callHeartbeat) < slices.Index(tc.order, callAllocs) {
			path = []string{events.NodeStatusDisconnected, events.NodeStatusInitializing, events.NodeStatusReady}
		}
		if got := statuses(h.Changes[a.id()]); len(got) < len(path) || !slices.Equal(got[len(got)-len(path):], path) {
			t.Errorf("%s went %v, want it to end %v", a.name, got, path)
		}
	}
}

// TestDisconnectOutlastsLostAfter: A stays cut off past its group's
// lost_after. Its allocations are lost and their replacements on C stay;
// when A comes back its client stops the originals, which the servers
// want stopped, and reports them complete. Exactly count allocations run:
// B's and the replacements.
func TestDisconnectOutlastsLostAfter(t *testing.T) {
	t.Parallel()
	cl, a, b, c, origA, origB := setup(t, func(tg *api.TaskGroup) {
		tg.Disconnect = &api.DisconnectStrategy{LostAfter: new(2 * time.Second), Replace: new(true)}
	})
	replacements := cutOff(t, cl, a, c, origA)
	wantsA(t, cl, a, "pinned")
	cl.waitState("A's originals lost and A down", func(v projections.View) bool {
		if statusOf(t, v, a.id()) != events.NodeStatusDown {
			return false
		}
		for _, al := range jobAllocs(t, v, jobID) {
			if slices.Contains(origA, al.ID) && (al.DesiredStatus != events.AllocDesiredStop || al.ClientStatus != events.AllocClientLost) {
				return false
			}
		}
		return true
	})
	checkRunningLocally(t, a, origA)

	a.gate.open()
	cl.waitNode(a, events.NodeStatusReady)
	want := slices.Sorted(slices.Values(append(slices.Clone(origB), replacements...)))
	cl.waitLive("B's originals and the replacements running, A's originals complete", want)
	cl.view(func(v projections.View) {
		running := 0
		for _, al := range jobAllocs(t, v, jobID) {
			if al.DesiredStatus == events.AllocDesiredRun {
				running++
			}
		}
		if running != count {
			t.Errorf("%d allocations to run once settled, want %d", running, count)
		}
	})
	checkStopped(t, a, origA)
	placedOnA(t, cl, a, "pinned")
	for _, id := range replacements {
		for _, h := range c.rec.handles(id) {
			if !h.running() || h.stops.Load() != 0 {
				t.Errorf("replacement %s on %s: running %v, stopped %d times", id, c.name, h.running(), h.stops.Load())
			}
		}
	}
	h := checkHistory(t, cl, a, b, c)
	if h.readyFromDown[a.id()] > 0 {
		// N1's initializing step is for disconnected nodes (as in Nomad):
		// a node already down comes back ready at once.
		t.Logf("%s went %v: ready straight from down", a.name, statuses(h.Changes[a.id()]))
	}
}

// TestLateHeartbeatReconnects: A's heartbeats are slow to reach the
// servers (a client paused, a slow path) but none fails, so the client
// never sees a disconnect, while the servers mark A disconnected, its
// allocations unknown and replaced on C. When A's heartbeat arrives, A is
// initializing (N1) until it updates its allocations — and its client,
// having seen no failed call, must still send them, as Nomad's client
// does when the watch shows its allocations unknown. Then it is as any
// other reconnect: A ready, its originals kept, the replacements stopped.
func TestLateHeartbeatReconnects(t *testing.T) {
	t.Parallel()
	cl, a, b, c, origA, origB := setup(t, replaceAfterHour)
	a.gate.hold()
	a.gate.release(callRegister)
	a.gate.release(callAllocs)
	var replacements []string
	// A's watch still works: it sees its allocations unknown and re-sends
	// their state at once, so they may already read running again.
	cl.waitState("A disconnected, its allocations replaced on C", func(v projections.View) bool {
		replacements = disconnected(t, v, a, c, origA, true)
		return replacements != nil
	})
	wantsA(t, cl, a, "pinned")
	if n := a.gate.failed(callHeartbeat); n > 0 {
		t.Fatalf("%d of %s's heartbeats failed: the client saw a disconnect", n, a.name)
	}
	a.gate.open()
	a.gate.waitAnswered(t, callHeartbeat)
	if s := cl.nodeStatus(a); s != events.NodeStatusInitializing && s != events.NodeStatusReady {
		t.Errorf("%s after its late heartbeat is %s", a.name, s)
	}
	cl.waitNode(a, events.NodeStatusReady)
	checkKept(t, cl, a, c, origA, origB, replacements)
	placedOnA(t, cl, a, "pinned")
	h := checkHistory(t, cl, a, b, c)
	t.Logf("%s went %v; its calls: %s", a.name, h.Changes[a.id()], strings.Join(a.gate.answers(), ", "))
}

// checkKept checks the end of a reconnect that kept A's originals:
// exactly count allocations run, A's originals (the same ids, never
// restarted, by the servers' account and by A's own) and B's; and each
// replacement on C was stopped as not needed and reported complete by C.
func checkKept(t *testing.T, cl *cluster, a, c *clientNode, origA, origB, replacements []string) {
	t.Helper()
	// Exactly count allocations run: A's originals and B's.
	want := slices.Sorted(slices.Values(append(slices.Clone(origA), origB...)))
	cl.waitLive("A's and B's originals running and the replacements complete", want)
	cl.view(func(v projections.View) {
		running := 0
		for _, al := range jobAllocs(t, v, jobID) {
			if al.DesiredStatus == events.AllocDesiredRun {
				running++
				if ts := al.TaskStates[taskName]; ts == nil || ts.Restarts != 0 || ts.State != events.TaskStateRunning {
					t.Errorf("alloc %s on %s: task state %+v, want running, never restarted", al.ID, al.NodeID, ts)
				}
			}
			if slices.Contains(replacements, al.ID) && al.DesiredDescription != descReconnected {
				t.Errorf("replacement %s stopped as %q, want %q", al.ID, al.DesiredDescription, descReconnected)
			}
		}
		if running != count {
			t.Errorf("%d allocations to run once settled, want %d", running, count)
		}
	})
	checkRunningLocally(t, a, origA)
	checkStopped(t, c, replacements)

}

// setup starts the server and nodes A and B, runs the job (two
// allocations on each), then starts the empty node C.
func setup(t *testing.T, tolerate func(tg *api.TaskGroup)) (cl *cluster, a, b, c *clientNode, origA, origB []string) {
	t.Helper()
	cl = startCluster(t)
	a, b = cl.addNode("node-a"), cl.addNode("node-b")
	job := webJobTolerating(tolerate)
	cl.register(job)
	cl.view(func(v projections.View) {
		// The servers keep the form the job used.
		j, err := jobs.Get(v, "default", jobID)
		if err != nil {
			t.Fatal(err)
		}
		got, asked := j.TaskGroups[0], job.TaskGroups[0]
		if (asked.Disconnect != nil) != (got.Disconnect != nil) ||
			(asked.MaxClientDisconnect != nil && got.MaxClientDisconnect != *asked.MaxClientDisconnect) {
			t.Fatalf("group stored with disconnect %+v, max_client_disconnect %v", got.Disconnect, got.MaxClientDisconnect)
		}
	})
	cl.waitState("the job running on A and B, its deployment successful", func(v projections.View) bool {
		running := 0
		for _, al := range jobAllocs(t, v, jobID) {
			if al.ClientStatus == events.AllocClientRunning {
				running++
			}
		}
		d, err := deployments.Latest(v, "default", jobID)
		return running == count && err == nil && d != nil && d.Status == events.DeploymentStatusSuccessful
	})
	cl.view(func(v projections.View) {
		for _, al := range jobAllocs(t, v, jobID) {
			switch al.NodeID {
			case a.id():
				origA = append(origA, al.ID)
			case b.id():
				origB = append(origB, al.ID)
			}
		}
	})
	if len(origA) != count/2 || len(origB) != count/2 {
		t.Fatalf("%d allocations on A and %d on B, want %d each", len(origA), len(origB), count/2)
	}
	c = cl.addNode("node-c")
	return cl, a, b, c, origA, origB
}

// cutOff cuts A off and waits until it is disconnected and a replacement
// of each of its allocations runs on C; it returns the replacements.
func cutOff(t *testing.T, cl *cluster, a, c *clientNode, origA []string) []string {
	t.Helper()
	a.gate.cut()
	var replacements []string
	cl.waitState("A disconnected, its allocations unknown and replaced on C", func(v projections.View) bool {
		replacements = disconnected(t, v, a, c, origA, false)
		return replacements != nil
	})
	return replacements
}

// disconnected returns the replacements of A's originals when A is
// disconnected, its originals unknown (or lost) and each replaced by an
// allocation running on C; nil until then.
func disconnected(t *testing.T, v projections.View, a, c *clientNode, origA []string, resent bool) []string {
	if statusOf(t, v, a.id()) != events.NodeStatusDisconnected {
		return nil
	}
	var replacements []string
	for _, al := range jobAllocs(t, v, jobID) {
		switch {
		case slices.Contains(origA, al.ID):
			if al.ClientStatus != events.AllocClientUnknown && al.ClientStatus != events.AllocClientLost &&
				(!resent || al.ClientStatus != events.AllocClientRunning) {
				return nil
			}
		case al.PreviousAllocation != "":
			if al.NodeID != c.id() || !slices.Contains(origA, al.PreviousAllocation) || al.ClientStatus != events.AllocClientRunning {
				return nil
			}
			replacements = append(replacements, al.ID)
		}
	}
	if len(replacements) != len(origA) {
		return nil
	}
	return replacements
}

// wantsA registers a job that only A can run while A is not ready, and
// waits until the scheduler has found no room for it: it is placed once A
// is ready again, and the archive walk checks that this happens no
// earlier.
func wantsA(t *testing.T, cl *cluster, a *clientNode, job string) {
	t.Helper()
	cl.register(pinnedJob(job, a.name, false, time.Hour))
	cl.settle()
	cl.view(func(v projections.View) {
		if list := jobAllocs(t, v, job); len(list) != 0 {
			t.Fatalf("job %s placed on %s while it is %s", job, list[0].NodeID, statusOf(t, v, a.id()))
		}
	})
}

// placedOnA waits until the jobs of wantsA run on A.
func placedOnA(t *testing.T, cl *cluster, a *clientNode, jobs ...string) {
	t.Helper()
	for _, job := range jobs {
		cl.waitState("job "+job+" running on "+a.name, func(v projections.View) bool {
			list := jobAllocs(t, v, job)
			return len(list) == 1 && list[0].NodeID == a.id() && list[0].ClientStatus == events.AllocClientRunning
		})
	}
}

// checkRunningLocally checks, from A's side (its client's runners and its
// driver's handles, not the servers), that ids run, never restarted.
func checkRunningLocally(t *testing.T, n *clientNode, ids []string) {
	t.Helper()
	for _, id := range ids {
		r, ok := n.client().Runner(id)
		if !ok {
			t.Errorf("%s has no runner for %s", n.name, id)
			continue
		}
		u, _ := r.ClientUpdate()
		if ts := u.TaskStates[taskName]; u.ClientStatus != events.AllocClientRunning || ts == nil ||
			ts.State != events.TaskStateRunning || ts.Restarts != 0 {
			t.Errorf("%s's alloc %s: %s, task %+v; want running, never restarted", n.name, id, u.ClientStatus, ts)
		}
		if s := n.rec.starts(id); s != 1 {
			t.Errorf("%s started alloc %s's task %d times", n.name, id, s)
		}
		for _, h := range n.rec.handles(id) {
			if !h.running() || h.stops.Load() != 0 {
				t.Errorf("%s's alloc %s (recovered %v): running %v, stopped %d times", n.name, id, h.recovered, h.running(), h.stops.Load())
			}
		}
	}
}

// checkStopped checks that n's client stopped ids (started once) and
// reported them complete.
func checkStopped(t *testing.T, n *clientNode, ids []string) {
	t.Helper()
	testagent.WaitFor(t, waitTimeout, n.name+"'s stopped allocations terminal", func() bool {
		for _, id := range ids {
			if r, ok := n.client().Runner(id); ok && !r.Terminal() {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		if s := n.rec.starts(id); s != 1 {
			t.Errorf("%s started alloc %s's task %d times", n.name, id, s)
		}
		hs := n.rec.handles(id)
		stops := 0
		for _, h := range hs {
			if h.running() {
				t.Errorf("%s's alloc %s still runs", n.name, id)
			}
			stops += int(h.stops.Load())
		}
		if len(hs) == 0 || stops == 0 {
			t.Errorf("%s's alloc %s: %d handles, %d stops; want it stopped by its client", n.name, id, len(hs), stops)
		}
	}
}

// checkHistory walks the archive: no placement on a node that was not
// ready, no disconnected node ready before its alloc update, B and C never
// missed a heartbeat (else the machine is too slow for the TTLs), and A
// missed one and ends ready.
func checkHistory(t *testing.T, cl *cluster, a, b, c *clientNode) *disconnectHistory {
	t.Helper()
	snap := cl.agent.Store().Snapshot()
	defer snap.Close()
	h := walkDisconnect(t, snap)
	for _, v := range h.violations {
		t.Error(v)
	}
	for _, n := range []*clientNode{b, c} {
		if h.missed[n.id()] > 0 {
			t.Fatalf("%s, never cut off, missed %d heartbeats (went %v): the machine is too slow for TTL %v + grace %v",
				n.name, h.missed[n.id()], h.Changes[n.id()], heartbeatMinTTL, heartbeatGrace)
		}
	}
	if h.missed[a.id()] == 0 || h.Status[a.id()] != events.NodeStatusReady {
		t.Errorf("%s missed %d heartbeats and ends %s", a.name, h.missed[a.id()], h.Status[a.id()])
	}
	return h
}

// statuses drops the indexes of a node's status changes.
func statuses(changes []testagent.NodeChange) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Status
	}
	return out
}

// waitLive waits until the job's running allocations are exactly want and
// every other one is stopped and complete (what names that state), then
// until the cluster settles.
func (cl *cluster) waitLive(what string, want []string) {
	cl.t.Helper()
	cl.waitState(what, func(v projections.View) bool {
		var live []string
		for _, al := range jobAllocs(cl.t, v, jobID) {
			switch {
			case al.DesiredStatus == events.AllocDesiredRun && al.ClientStatus == events.AllocClientRunning:
				live = append(live, al.ID)
			case al.DesiredStatus == events.AllocDesiredRun, al.ClientStatus != events.AllocClientComplete:
				return false
			}
		}
		slices.Sort(live)
		return slices.Equal(live, want)
	})
	cl.settle()
}
