package rerun_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
	"github.com/ordoplane/ordo/processors/worker"
	"github.com/ordoplane/ordo/projections/projectionstest"
)

// The node drainer marks an allocation for migration in the same entry
// that creates the eval (node.MarkMigrate). That entry is what triggered
// the eval, not an attempt of its plan refused by the plan applier: the
// record keeps it apart as the Trigger, Earlier stays empty, and the
// explanation says the drainer marked the allocation.
func TestMigrateMarkIsTheTrigger(t *testing.T) {
	l := newLog(t)
	l.append(readyNode("n1", 1000), readyNode("n2", 1000))
	job := schedulertest.Job("web", events.JobTypeService, 1)
	first := pendingEval("e-1", "web")
	l.register(job, &first)
	p := l.compute(&first)
	if len(p.Placements) != 1 {
		t.Fatalf("first plan places %d", len(p.Placements))
	}
	l.commit(first.ID, p.Placements, nil, worker.EvalUpdates(&first, p, time.Unix(0, projectionstest.LeaderTime)))
	alloc := p.Placements[0]

	// The drain starts, then the drainer marks the allocation and creates
	// the eval in one entry, as node.MarkMigrate decides.
	l.append(&events.NodeDrainUpdated{ID: alloc.NodeID, DrainStrategy: &events.DrainStrategy{StartedAt: projectionstest.LeaderTime}})
	yes := true
	drain := pendingEval("e-2", "web")
	drain.TriggeredBy = events.EvalTriggerNodeDrain
	markedAt := l.append(
		&events.AllocsDesiredUpdated{EvalID: drain.ID, Updates: []events.AllocDesiredUpdate{{ID: alloc.ID, DesiredTransition: events.DesiredTransition{Migrate: &yes}}}},
		&events.EvalsUpserted{Evals: []events.Evaluation{drain}})
	drain.ModifyIndex = markedAt
	migrate := l.compute(&drain)
	l.commit(drain.ID, migrate.Placements, append(migrate.Stops, migrate.Updates...),
		worker.EvalUpdates(&drain, migrate, time.Unix(0, projectionstest.LeaderTime)))

	rec, err := rerun.Recorded(l.store, drain.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Decided() || len(rec.Earlier) != 0 {
		t.Fatalf("record: decided %v, earlier attempts %+v; want decided with none", rec.Decided(), rec.Earlier)
	}
	if rec.Trigger == nil || rec.Trigger.Index != markedAt || len(rec.Trigger.Updates) != 1 {
		t.Fatalf("trigger = %+v, want the marking at %d", rec.Trigger, markedAt)
	}
	res, err := rerun.Explain(l.store, drain.ID, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Equal || len(res.EarlierAttempts) != 0 {
		t.Fatalf("explain: equal %v, earlier %+v, diff %+v", res.Equal, res.EarlierAttempts, res.Diff)
	}
	got := strings.Join(rerun.TriggerLines(res.Trigger), "\n")
	if want := "allocation " + alloc.ID + " marked for migration by the node drainer"; got != want {
		t.Fatalf("trigger lines:\n%s\nwant\n%s", got, want)
	}
	if s := rerun.Diff(rec, migrate).String(); strings.Contains(s, "refused") {
		t.Fatalf("the diff calls the marking a refused attempt:\n%s", s)
	}

	// The first eval only created itself: no trigger.
	if rec, err := rerun.Recorded(l.store, first.ID); err != nil || rec.Trigger != nil {
		t.Fatalf("first eval: trigger %+v, err %v", rec.Trigger, err)
	}
}

// An operator's stop and the other transitions read as what they were.
func TestTriggerLines(t *testing.T) {
	yes := true
	c := &rerun.Commit{Index: 9, Updates: []events.AllocDesiredUpdate{
		{ID: "a1", DesiredStatus: events.AllocDesiredStop, DesiredDescription: "alloc was stopped by an operator",
			DesiredTransition: events.DesiredTransition{NoShutdownDelay: &yes}},
		{ID: "a2", DesiredTransition: events.DesiredTransition{Reschedule: &yes}},
		{ID: "a3"},
	}}
	want := []string{
		"allocation a1 stopped (alloc was stopped by an operator), without its shutdown delay",
		"allocation a2 marked to be rescheduled",
		"allocation a3 updated",
	}
	got := rerun.TriggerLines(c)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rerun.TriggerLines(nil) != nil {
		t.Fatal("a nil commit has lines")
	}
}
