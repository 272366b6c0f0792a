package scheduler_test

import (
	"bytes"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// WithScores records every node each placement weighed, and the node it
// chose is the best of them; the plan it decides is byte for byte the
// plan without it.
func TestScoresExplainWithoutChangingThePlan(t *testing.T) {
	h := fleet(12)
	j := schedulertest.Job("web", events.JobTypeService, 6)
	h.State.UpsertJob(j)
	h.Bump()
	ev := h.NewEval("default", "web", events.EvalTriggerJobRegister)
	plain, err := scheduler.Compute(h.State, ev)
	if err != nil {
		t.Fatal(err)
	}
	explained, err := scheduler.Compute(h.State, ev, scheduler.WithScores())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := plain.Encode()
	b, _ := explained.Encode()
	if !bytes.Equal(a, b) {
		t.Fatal("WithScores changed the plan")
	}
	if len(plain.Scores) != 0 {
		t.Fatalf("scores recorded without WithScores: %d", len(plain.Scores))
	}
	if len(explained.Scores) != len(explained.Placements) || len(explained.Placements) != 6 {
		t.Fatalf("%d placements scored, %d placed", len(explained.Scores), len(explained.Placements))
	}
	for i, ps := range explained.Scores {
		p := explained.Placements[i]
		if ps.AllocName != p.Name || ps.Chosen != p.NodeID {
			t.Fatalf("scores %d for %s chose %s; placement %s is on %s", i, ps.AllocName, ps.Chosen, p.Name, p.NodeID)
		}
		best := -2.0
		var chosen float64
		for _, n := range ps.Nodes {
			if _, ok := n.Scores["binpack"]; !ok {
				t.Fatalf("node %s scored without binpack: %v", n.NodeID, n.Scores)
			}
			best = max(best, n.FinalScore)
			if n.NodeID == ps.Chosen {
				chosen = n.FinalScore
			}
		}
		if len(ps.Nodes) < 2 || chosen != best {
			t.Fatalf("%s: chose %s scoring %v of %d nodes, best %v", ps.AllocName, ps.Chosen, chosen, len(ps.Nodes), best)
		}
	}
}
