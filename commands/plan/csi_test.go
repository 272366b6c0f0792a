package plan_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/csi/csitest"
	"github.com/ordoplane/ordo/commands/plan"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestRacingPlansCannotBothClaim: two jobs' plans each place a writer of
// one single-node-writer volume, both verified on the same state. The
// first commits and claims it; the second is refused as a conflict (its
// worker re-plans) whether it is decided after the first applied, or
// before (its precondition on the volume's modify index fails at apply).
// Without the check both would claim the volume.
func TestRacingPlansCannotBothClaim(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "p1", nil), csitest.PluginNode("n2", "p2", nil))
	h.Apply(csitest.Volume("vol", events.CSIAccessSingleNodeWriter))
	h.Apply(csitest.DBJob("a", "vol", events.CSIAccessSingleNodeWriter, false, 1),
		csitest.DBJob("b", "vol", events.CSIAccessSingleNodeWriter, false, 1))
	h.Apply(&events.EvalsUpserted{Evals: []events.Evaluation{
		{ID: "ea", Namespace: "default", JobID: "a", Status: events.EvalStatusPending},
		{ID: "eb", Namespace: "default", JobID: "b", Status: events.EvalStatusPending}}})
	commit := func(eval, job, node string) plan.Commit {
		r, err := h.View().Get(nodes.Table, node)
		if err != nil {
			t.Fatal(err)
		}
		a := csitest.Alloc(eval+"-alloc", job, node, 0)
		a.EvalID, a.ClientStatus = eval, events.AllocClientPending
		return plan.Commit{EvalID: eval, Placements: []events.Allocation{a}, NodeIndexes: map[string]uint64{node: r.ModifyIndex}}
	}
	a, b := commit("ea", "a", "n1"), commit("eb", "b", "n1")
	stale := h.Store.Snapshot()
	defer stale.Close()
	staleB, err := b.Decide(projections.NewView(stale), time.Time{}, nil)
	if err != nil {
		t.Fatalf("b decided on the state both plans were verified on: %v", err)
	}

	if _, err := h.Run(a); err != nil {
		t.Fatal(err)
	}
	claims := func() []events.CSIVolumeClaim {
		vol, err := csi.GetVolume(h.View(), "default", "vol")
		if err != nil {
			t.Fatal(err)
		}
		return vol.Claims
	}
	if c := claims(); len(c) != 1 || c[0].JobID != "a" {
		t.Fatalf("claims after a: %+v", c)
	}

	// Decided after a applied: refused as a conflict on the volume.
	_, err = h.Run(b)
	var conflict *commands.ConflictError
	if !errors.As(err, &conflict) || conflict.Precondition.Table != csi.VolumesTable {
		t.Fatalf("b after a: %v, want a conflict on %s", err, csi.VolumesTable)
	}
	// Decided before a applied, applied after: its precondition fails.
	e := pt.Entry(t, "stale-b", staleB.Events...)
	e.Preconditions = staleB.Preconditions
	if res := pt.ApplyOne(t, h.FSM, h.FSM.Applied()+1, e); res.Err == nil {
		t.Fatal("b decided before a applied after it")
	}
	if c := claims(); len(c) != 1 || c[0].JobID != "a" {
		t.Fatalf("claims after b: %+v", c)
	}
}
