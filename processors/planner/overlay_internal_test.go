package planner

import (
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/planapply"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// In-flight placements count as held: a plan verified against the
// previous one, still in raft, may not move what that one placed.
func TestOverlayRefusesMovingAnInflightPlacement(t *testing.T) {
	h, plan := schedulertest.Planned(t, 2, "n1", "n2")
	inflight := planapply.Evaluate(plan, h.State)
	moved := inflight.Placements[0]
	to := "n1"
	if moved.NodeID == to {
		to = "n2"
	}
	moved.NodeID = to
	next := &scheduler.Plan{EvalID: "eval-2", Namespace: plan.Namespace, JobID: plan.JobID, Placements: []events.Allocation{moved}}
	if got := planapply.Evaluate(next, h.State); !got.FullCommit() {
		t.Fatalf("without the in-flight plan %s is new, but was refused: %v", moved.ID, got.Reasons)
	}
	got := planapply.Evaluate(next, withPlaced(h.State, inflight.Placements))
	if got.Reasons[to] != planapply.ReasonAllocElsewhere {
		t.Fatalf("rejected %v (%v), want %s refused for moving %s", got.RejectedNodes, got.Reasons, to, moved.ID)
	}
	if a, ok := withPlaced(h.State, inflight.Placements).Alloc(moved.ID); !ok || a.NodeID == to {
		t.Fatalf("the overlay answers %v, %v for the in-flight %s", a, ok, moved.ID)
	}
}
