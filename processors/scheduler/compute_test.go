package scheduler_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// fleet returns a harness with n nodes of mixed sizes and classes.
func fleet(n int) *schedulertest.Harness {
	h := schedulertest.New()
	for i := range n {
		node := schedulertest.Node(fmt.Sprintf("node-%05d", i))
		node.Resources.CPU = 2000 + 1000*(i%4)
		node.NodeClass = []string{"small", "medium", "large"}[i%3]
		node.Datacenter = []string{"dc1", "dc2"}[i%2]
		h.State.UpsertNode(node)
	}
	return h
}

// TestReplayIdentical re-runs every eval of a scenario against the
// snapshot it saw: the plans encode to the same bytes, and computing does
// not change the state; on a fleet of one walk group and on one of many
// (walk.go).
func TestReplayIdentical(t *testing.T) {
	for _, n := range []int{40, 300} {
		t.Run(fmt.Sprint(n, " nodes"), func(t *testing.T) { testReplayIdentical(t, n) })
	}
}

func testReplayIdentical(t *testing.T, nodes int) {
	h := fleet(nodes)
	type recorded struct {
		eval *events.Evaluation
		snap *scheduler.MemState
		plan []byte
	}
	var recs []recorded
	run := func(e *events.Evaluation) {
		snap := h.State.Clone()
		plan, _, err := h.Process(e)
		if err != nil {
			t.Fatal(err)
		}
		b, err := plan.Encode()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, recorded{e, snap, b})
	}
	for i, typ := range []string{events.JobTypeService, events.JobTypeBatch, events.JobTypeSystem, events.JobTypeSysbatch} {
		j := schedulertest.Job(fmt.Sprintf("job-%d", i), typ, 25)
		h.State.UpsertJob(j)
		h.Bump()
		run(h.NewEval("default", j.ID, events.EvalTriggerJobRegister))
	}
	// Knock out some nodes and re-evaluate everything.
	for _, id := range []string{"node-00003", "node-00011", "node-00020"} {
		n, _ := h.State.Node(id)
		c := *n
		c.Status = events.NodeStatusDown
		h.State.UpsertNode(&c)
	}
	h.Bump()
	for i := range 4 {
		run(h.NewEval("default", fmt.Sprintf("job-%d", i), events.EvalTriggerNodeUpdate))
	}
	for _, r := range recs {
		before := stateDigest(t, r.snap)
		for range 3 {
			p, err := scheduler.Compute(r.snap, r.eval)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := p.Encode()
			if !bytes.Equal(b, r.plan) {
				t.Fatalf("eval %s: replayed plan differs", r.eval.ID)
			}
		}
		// A state holding the same data built in another order.
		if p, _ := scheduler.Compute(rebuilt(r.snap), r.eval); !bytes.Equal(mustEncode(t, p), r.plan) {
			t.Fatalf("eval %s: plan differs on a state built in another order", r.eval.ID)
		}
		if after := stateDigest(t, r.snap); !bytes.Equal(before, after) {
			t.Fatalf("eval %s: Compute changed the state", r.eval.ID)
		}
	}
}

func mustEncode(t *testing.T, p *scheduler.Plan) []byte {
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rebuilt copies st inserting everything in reverse order.
func rebuilt(st *scheduler.MemState) *scheduler.MemState {
	out := scheduler.NewMemState()
	out.SetIndex(st.Index())
	nodes := st.Nodes()
	for i := len(nodes) - 1; i >= 0; i-- {
		out.UpsertNode(nodes[i])
	}
	allocs := st.Allocs()
	for i := len(allocs) - 1; i >= 0; i-- {
		out.UpsertAlloc(allocs[i])
	}
	for _, a := range allocs {
		if j, ok := st.Job(a.Namespace, a.JobID); ok {
			for v := uint64(0); v <= j.Version; v++ {
				if old, ok := st.JobVersion(a.Namespace, a.JobID, v); ok {
					out.UpsertJob(old)
				}
			}
			out.UpsertJob(j)
		}
		if d, ok := st.LatestDeployment(a.Namespace, a.JobID); ok {
			out.UpsertDeployment(d)
		}
	}
	for i := range 4 {
		if j, ok := st.Job("default", fmt.Sprintf("job-%d", i)); ok {
			out.UpsertJob(j)
		}
	}
	return out
}

func stateDigest(t *testing.T, st *scheduler.MemState) []byte {
	var buf bytes.Buffer
	for _, n := range st.Nodes() {
		b, _ := events.Marshal(n)
		buf.Write(b)
	}
	for _, a := range st.Allocs() {
		b, _ := events.Marshal(a)
		buf.Write(b)
	}
	return buf.Bytes()
}

// TestNeverOvercommits places many jobs of random-ish sizes and checks
// that no node ever holds more than it has, on a fleet of one walk group
// and on one of several (walk.go).
func TestNeverOvercommits(t *testing.T) {
	for _, n := range []int{30, 100} {
		t.Run(fmt.Sprint(n, " nodes"), func(t *testing.T) { testNeverOvercommits(t, n) })
	}
}

func testNeverOvercommits(t *testing.T, nodes int) {
	h := fleet(nodes)
	for i := range 30 {
		j := schedulertest.Job(fmt.Sprintf("j%d", i), events.JobTypeService, 5+i%7)
		j.TaskGroups[0].Tasks[0].Resources = &events.Resources{CPU: 300 + 97*(i%9), MemoryMB: 200 + 311*(i%5)}
		if i%4 == 0 {
			j.Constraints = append(j.Constraints, events.Constraint{Operand: events.ConstraintDistinctHosts})
		}
		h.State.UpsertJob(j)
		h.Bump()
		if _, _, err := h.Process(h.NewEval("default", j.ID, events.EvalTriggerJobRegister)); err != nil {
			t.Fatal(err)
		}
	}
	placed := 0
	for _, n := range h.State.Nodes() {
		var cpu, mem int
		jobs := map[string]int{}
		for _, a := range h.State.AllocsByNode(n.ID) {
			if a.Terminal() {
				continue
			}
			placed++
			cpu += a.Resources.CPU
			mem += a.Resources.MemoryMB
			jobs[a.JobID]++
		}
		if cpu > n.Resources.CPU || mem > n.Resources.MemoryMB {
			t.Errorf("node %s overcommitted: cpu %d/%d mem %d/%d", n.ID, cpu, n.Resources.CPU, mem, n.Resources.MemoryMB)
		}
		for i := 0; i < 30; i += 4 {
			if jobs[fmt.Sprintf("j%d", i)] > 1 {
				t.Errorf("node %s: distinct_hosts job j%d has %d allocs", n.ID, i, jobs[fmt.Sprintf("j%d", i)])
			}
		}
	}
	if placed < 100 {
		t.Fatalf("only %d placed", placed)
	}
}

func TestUnknownJobType(t *testing.T) {
	h := fleet(2)
	j := schedulertest.Job("x", "mystery", 1)
	h.State.UpsertJob(j)
	if _, err := scheduler.Compute(h.State, h.NewEval("default", "x", events.EvalTriggerJobRegister)); err == nil {
		t.Fatal("want ErrUnknownJobType")
	}
}

func TestDeriveIDStable(t *testing.T) {
	a, b := scheduler.DeriveID("eval-1", "alloc", 0), scheduler.DeriveID("eval-1", "alloc", 1)
	if a == b || a != scheduler.DeriveID("eval-1", "alloc", 0) || len(a) != 36 {
		t.Fatalf("ids %q %q", a, b)
	}
}

// TestRetryMintsFreshIDs: an eval whose plan was partly refused is
// computed again on the state holding what its first plan placed, as the
// worker does. The retry must place the rest under ids of its own: an id
// of the first attempt would move that allocation to another node (the
// fleet test saw a node told its running allocation was not on it).
func TestRetryMintsFreshIDs(t *testing.T) {
	h := fleet(8)
	j := schedulertest.Job("web", events.JobTypeService, 12)
	h.State.UpsertJob(j)
	h.Bump()
	for _, id := range []string{"node-00001", "node-00004", "node-00006"} {
		h.Reject[id] = true
	}
	eval := h.NewEval("default", j.ID, events.EvalTriggerJobRegister)
	_, res, err := h.Process(eval)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RejectedNodes) == 0 || len(res.Placements) == 0 {
		t.Fatalf("want a partly refused plan, got %d placed and %v refused", len(res.Placements), res.RejectedNodes)
	}
	first := map[string]string{} // id → node
	for _, a := range res.Placements {
		first[a.ID] = a.NodeID
	}
	clear(h.Reject)
	snap := h.State.Clone()
	retry, _, err := h.Process(eval)
	if err != nil {
		t.Fatal(err)
	}
	if len(retry.Placements) != 12-len(first) {
		t.Fatalf("retry placed %d, want %d", len(retry.Placements), 12-len(first))
	}
	for _, a := range retry.Placements {
		if node, ok := first[a.ID]; ok {
			t.Fatalf("retry reuses id %s, placed on %s by the first attempt, for %s on %s", a.ID, node, a.Name, a.NodeID)
		}
	}
	live := map[string]bool{}
	for _, a := range h.State.AllocsByJob("default", j.ID) {
		if node, ok := first[a.ID]; ok && a.NodeID != node {
			t.Errorf("allocation %s moved from %s to %s", a.ID, node, a.NodeID)
		}
		if !a.Terminal() {
			live[a.Name] = true
		}
	}
	if len(live) != 12 {
		t.Fatalf("%d distinct allocations live, want 12", len(live))
	}
	// A re-run of the retry on the state it saw mints the same ids.
	again, err := scheduler.Compute(snap, eval)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustEncode(t, again), mustEncode(t, retry)) {
		t.Fatal("the retry's plan differs when re-run on its snapshot")
	}
}

// TestRetryMintsFreshFollowUps: the follow-up evals of delayed
// reschedules are minted past the ids the state already links allocations
// to, as a retried eval finds its first attempt's: a re-minted follow-up
// would move that attempt's allocations to another reschedule time.
func TestRetryMintsFreshFollowUps(t *testing.T) {
	h := fleet(4)
	j := schedulertest.Job("web", events.JobTypeService, 4)
	h.State.UpsertJob(j)
	h.Bump()
	if _, _, err := h.Process(h.NewEval("default", j.ID, events.EvalTriggerJobRegister)); err != nil {
		t.Fatal(err)
	}
	eval := h.NewEval("default", j.ID, events.EvalTriggerRetryFailedAlloc)
	first := scheduler.DeriveID(eval.ID, "followup", 0)
	allocs := h.State.AllocsByJob("default", j.ID)
	slices.SortFunc(allocs, func(a, b *events.Allocation) int { return strings.Compare(a.Name, b.Name) })
	// Two failed a minute apart (two follow-ups); the first already linked
	// to the follow-up the eval's first attempt minted.
	for i, a := range allocs[:2] {
		c := *a
		c.ClientStatus, c.ModifyTime = events.AllocClientFailed, h.Now+int64(i)*int64(time.Minute)
		if i == 0 {
			c.FollowupEvalID = first
		}
		h.State.UpsertAlloc(&c)
	}
	h.Bump()
	plan, err := scheduler.Compute(h.State, eval)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.FollowUps) == 0 {
		t.Fatalf("no follow-up for the second failed allocation: %+v", plan)
	}
	for _, f := range plan.FollowUps {
		if f.ID == first {
			t.Fatalf("follow-up %s re-minted (wait until %d), linked from %s already", f.ID, f.WaitUntil, allocs[0].ID)
		}
	}
	for _, u := range plan.Updates {
		if u.ID == allocs[1].ID && u.FollowupEvalID == first {
			t.Fatalf("%s linked to the first attempt's follow-up", u.ID)
		}
	}
}
