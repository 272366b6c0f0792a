package evals_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestRegisterEvalGetsItsEntrysJobModifyIndex: an eval created by its
// job's registration without a JobModifyIndex (the command cannot know the
// index of the entry that changes the job) gets that entry's index, as
// Nomad's register eval carries the register's; a write-back without it
// keeps it, and other evals keep their own.
func TestRegisterEvalGetsItsEntrysJobModifyIndex(t *testing.T) {
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live, evals.Projection{})
	v := projections.NewView(live)
	reg := eval("reg", "default", "web", events.EvalStatusPending)
	node := eval("node", "default", "web", events.EvalStatusPending)
	node.TriggeredBy = events.EvalTriggerNodeUpdate
	kept := eval("kept", "default", "web", events.EvalStatusPending)
	kept.JobModifyIndex = 3 // an unchanged job's register eval
	pt.ApplyOne(t, f, 7, pt.Entry(t, "c1", &events.EvalsUpserted{Evals: []events.Evaluation{reg, node, kept}}))
	reg.Status = events.EvalStatusComplete // the worker's copy, written back
	pt.ApplyOne(t, f, 8, pt.Entry(t, "c2", &events.EvalsUpserted{Evals: []events.Evaluation{reg}}))
	for id, want := range map[string]uint64{"reg": 7, "node": 0, "kept": 3} {
		e, err := evals.Get(v, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.JobModifyIndex != want {
			t.Errorf("%s: JobModifyIndex %d, want %d", id, e.JobModifyIndex, want)
		}
	}
	pt.CheckRebuildEqualsLive(t, live, evals.Projection{})
}
