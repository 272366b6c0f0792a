package plan_test

import (
	"slices"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// setup places a 6-allocation job over three nodes and returns the state,
// the plan (not committed) and the nodes it used.
func setup(t *testing.T) (*schedulertest.Harness, *scheduler.Plan) {
	t.Helper()
	h, pl := schedulertest.Planned(t, 6, "n1", "n2", "n3")
	if len(pl.Placements) != 6 {
		t.Fatalf("placed %d", len(pl.Placements))
	}
	return h, pl
}

func nodesOf(as []events.Allocation) []string {
	var out []string
	for _, a := range as {
		if !slices.Contains(out, a.NodeID) {
			out = append(out, a.NodeID)
		}
	}
	slices.Sort(out)
	return out
}

func TestEvaluateCommitsAllThatFits(t *testing.T) {
	h, pl := setup(t)
	res := plan.Evaluate(pl, h.State)
	if !res.FullCommit() || len(res.Placements) != 6 || res.RefreshIndex != 0 {
		t.Fatalf("result %+v", res)
	}
}

// A node filled up by another plan since: its part is rejected, the rest
// commits, and the worker is told to refresh.
func TestEvaluateRejectsNodeFilledMeanwhile(t *testing.T) {
	h, pl := setup(t)
	h.State.UpsertAlloc(&events.Allocation{ID: "intruder", Namespace: "default", JobID: "other", TaskGroup: "other",
		Name: "other.other[0]", NodeID: "n2", Resources: events.Resources{CPU: 3500, MemoryMB: 100},
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning})
	h.Bump()
	res := plan.Evaluate(pl, h.State)
	if !slices.Equal(res.RejectedNodes, []string{"n2"}) || res.Reasons["n2"] != plan.ReasonExhausted {
		t.Fatalf("rejected %v %v", res.RejectedNodes, res.Reasons)
	}
	if got := nodesOf(res.Placements); !slices.Equal(got, []string{"n1", "n3"}) {
		t.Fatalf("committed on %v", got)
	}
	if len(res.Placements) != 4 || res.RefreshIndex != h.State.Index() {
		t.Fatalf("placements %d refresh %d", len(res.Placements), res.RefreshIndex)
	}
	// The intruder stopping frees the node again.
	a, _ := h.State.Alloc("intruder")
	c := *a
	c.ClientStatus = events.AllocClientComplete
	h.State.UpsertAlloc(&c)
	if res := plan.Evaluate(pl, h.State); !res.FullCommit() {
		t.Fatalf("rejected %v after the node emptied", res.RejectedNodes)
	}
}

func TestEvaluateRejectsNodeNoLongerSchedulable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(n *scheduler.Node)
		reason string
	}{
		{"down", func(n *scheduler.Node) { n.Status = events.NodeStatusDown }, plan.ReasonNodeNotReady},
		{"initializing", func(n *scheduler.Node) { n.Status = events.NodeStatusInitializing }, plan.ReasonNodeNotReady},
		{"ineligible", func(n *scheduler.Node) { n.SchedulingEligibility = events.NodeIneligible }, plan.ReasonNodeIneligible},
		{"draining", func(n *scheduler.Node) { n.Drain = true }, plan.ReasonNodeDraining},
		{"gone", nil, plan.ReasonNodeMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, pl := setup(t)
			if tc.change == nil {
				h.State.DeleteNode("n1")
			} else {
				n, _ := h.State.Node("n1")
				c := *n
				tc.change(&c)
				h.State.UpsertNode(&c)
			}
			res := plan.Evaluate(pl, h.State)
			if !slices.Equal(res.RejectedNodes, []string{"n1"}) || res.Reasons["n1"] != tc.reason {
				t.Fatalf("rejected %v %v", res.RejectedNodes, res.Reasons)
			}
			if slices.Contains(nodesOf(res.Placements), "n1") {
				t.Fatal("placement on n1 committed")
			}
		})
	}
}

// Stops on a down node always commit: a node that only loses allocations fits.
func TestEvaluateStopsOnDownNodeCommit(t *testing.T) {
	h, pl := setup(t)
	res := plan.Evaluate(pl, h.State)
	h.Commit(pl, &res)
	n, _ := h.State.Node("n1")
	c := *n
	c.Status = events.NodeStatusDown
	h.State.UpsertNode(&c)
	h.Bump()
	plan2, err := scheduler.Compute(h.State, h.NewEval("default", "web", events.EvalTriggerNodeUpdate))
	if err != nil {
		t.Fatal(err)
	}
	res2 := plan.Evaluate(plan2, h.State)
	if !res2.FullCommit() || len(res2.Stops) != 2 || len(res2.Placements) != 2 {
		t.Fatalf("stops %d placements %d rejected %v", len(res2.Stops), len(res2.Placements), res2.RejectedNodes)
	}
	for _, s := range res2.Stops {
		if s.ClientStatus != events.AllocClientLost {
			t.Fatalf("stop %+v not lost", s)
		}
	}
}

// A retried plan whose placements are already committed does not count
// them twice.
func TestEvaluateIgnoresAlreadyCommitted(t *testing.T) {
	h, pl := setup(t)
	res := plan.Evaluate(pl, h.State)
	h.Commit(pl, &res)
	if res := plan.Evaluate(pl, h.State); !res.FullCommit() {
		t.Fatalf("rejected %v", res.RejectedNodes)
	}
}

// moveFirst commits plan and returns a plan of another eval placing the
// first of its allocations again on another node, and that node.
func moveFirst(t *testing.T, h *schedulertest.Harness, pl *scheduler.Plan, keep ...events.Allocation) (*scheduler.Plan, string) {
	t.Helper()
	res := plan.Evaluate(pl, h.State)
	h.Commit(pl, &res)
	moved := pl.Placements[0]
	to := "n1"
	if moved.NodeID == to {
		to = "n2"
	}
	moved.NodeID, moved.PreviousAllocation = to, ""
	return &scheduler.Plan{EvalID: "eval-2", Namespace: pl.Namespace, JobID: pl.JobID,
		Placements: append([]events.Allocation{moved}, keep...)}, to
}

// A placement of an allocation the state holds on another node would move
// it: that node's part is refused (the worker re-plans), the rest
// commits. Placed again on its own node (an in-place update) it is not.
func TestEvaluateRefusesMovingAnAllocation(t *testing.T) {
	h, pl := setup(t)
	kept := pl.Placements[1]
	again, to := moveFirst(t, h, pl, kept)
	moved := again.Placements[0]
	res := plan.Evaluate(again, h.State)
	if !slices.Equal(res.RejectedNodes, []string{to}) || res.Reasons[to] != plan.ReasonAllocElsewhere {
		t.Fatalf("rejected %v (%v), want %s for placing %s there", res.RejectedNodes, res.Reasons, to, moved.ID)
	}
	if !slices.Equal(res.Moved[to], []string{moved.ID}) {
		t.Fatalf("moved %v, want %s on %s", res.Moved, moved.ID, to)
	}
	for _, a := range res.Placements {
		if a.ID == moved.ID {
			t.Fatalf("%s placed on %s, held on %s", a.ID, a.NodeID, pl.Placements[0].NodeID)
		}
	}
	if kept.NodeID != to && (len(res.Placements) != 1 || res.Placements[0].ID != kept.ID) {
		t.Fatalf("the in-place placement on its own node was not kept: %+v", res.Placements)
	}
}
