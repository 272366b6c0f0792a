package plan_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// In-flight placements count as held: a plan verified against the
// previous one, still in raft, may not move what that one placed.
func TestOverlayRefusesMovingAnInflightPlacement(t *testing.T) {
	h, p := schedulertest.Planned(t, 2, "n1", "n2")
	inflight := plan.Evaluate(p, h.State)
	moved := inflight.Placements[0]
	to := "n1"
	if moved.NodeID == to {
		to = "n2"
	}
	moved.NodeID = to
	next := &scheduler.Plan{EvalID: "eval-2", Namespace: p.Namespace, JobID: p.JobID, Placements: []events.Allocation{moved}}
	if got := plan.Evaluate(next, h.State); !got.FullCommit() {
		t.Fatalf("without the in-flight plan %s is new, but was refused: %v", moved.ID, got.Reasons)
	}
	got := plan.Evaluate(next, plan.WithPlaced(h.State, inflight.Placements))
	if got.Reasons[to] != plan.ReasonAllocElsewhere {
		t.Fatalf("rejected %v (%v), want %s refused for moving %s", got.RejectedNodes, got.Reasons, to, moved.ID)
	}
	if a, ok := plan.WithPlaced(h.State, inflight.Placements).Alloc(moved.ID); !ok || a.NodeID == to {
		t.Fatalf("the overlay answers %v, %v for the in-flight %s", a, ok, moved.ID)
	}
}
