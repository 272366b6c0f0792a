package rerun_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// decided returns a record of eval e-1 (snapshot 40, committed at 42)
// that placed two allocations, stopped one, marked one unknown, created a
// follow-up and a blocked eval, and the plan that reproduces it.
func decided() (*rerun.Record, *scheduler.Plan) {
	alloc := func(id, name, node string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", EvalID: "e-1", Name: name, NodeID: node, JobID: "web",
			TaskGroup: "web", Resources: events.Resources{CPU: 100, MemoryMB: 64},
			DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}
	}
	stop := events.AllocDesiredUpdate{ID: "a-old", DesiredStatus: events.AllocDesiredStop,
		DesiredDescription: "alloc not needed due to job update"}
	unknown := events.AllocDesiredUpdate{ID: "a-dis", DesiredDescription: "alloc is unknown since its node is disconnected",
		ClientStatus: events.AllocClientUnknown}
	follow := events.Evaluation{ID: "f-1", Namespace: "default", Type: "service", JobID: "web", Status: events.EvalStatusPending,
		TriggeredBy: scheduler.EvalTriggerMaxDisconnectTimeout, WaitUntil: 5e18, PreviousEval: "e-1"}
	blockedID := scheduler.DeriveID("e-1", "blocked", 0)
	blocked := events.Evaluation{ID: blockedID, Namespace: "default", JobID: "web", Status: events.EvalStatusBlocked,
		PreviousEval: "e-1", ClassEligibility: map[string]bool{"compute": true}, CreateTime: 111, ModifyTime: 111}
	metric := &events.AllocMetric{NodesEvaluated: 3, NodesExhausted: 3, DimensionExhausted: map[string]int{"memory": 3}}
	completed := events.Evaluation{ID: "e-1", Namespace: "default", JobID: "web", Status: events.EvalStatusComplete,
		SnapshotIndex: 40, QueuedAllocations: map[string]int{"web": 1}, FailedTGAllocs: map[string]*events.AllocMetric{"web": metric},
		BlockedEval: blockedID, NextEval: "f-1"}
	rec := &rerun.Record{EvalID: "e-1", Eval: events.Evaluation{ID: "e-1", Namespace: "default", JobID: "web"},
		Completed: &completed, SnapshotIndex: 40,
		Final: &rerun.Commit{Index: 42, Placements: []events.Allocation{alloc("a-1", "web.web[0]", "n1"), alloc("a-2", "web.web[1]", "n2")},
			Updates: []events.AllocDesiredUpdate{stop, unknown}, Evals: []events.Evaluation{follow, blocked}}}
	plan := &scheduler.Plan{EvalID: "e-1", Namespace: "default", JobID: "web", SnapshotIndex: 40,
		Placements: []events.Allocation{alloc("a-1", "web.web[0]", "n1"), alloc("a-2", "web.web[1]", "n2")},
		Stops:      []events.AllocDesiredUpdate{stop}, Updates: []events.AllocDesiredUpdate{unknown},
		FollowUps:         []events.Evaluation{follow},
		FailedTGAllocs:    map[string]*events.AllocMetric{"web": {NodesEvaluated: 3, NodesExhausted: 3, DimensionExhausted: map[string]int{"memory": 3}}},
		QueuedAllocations: map[string]int{"web": 1}, CreateBlockedEval: true, ClassEligibility: map[string]bool{"compute": true}}
	return rec, plan
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(rec *rerun.Record, p *scheduler.Plan)
		want   []rerun.Change
	}{
		{name: "equal"},
		{name: "placed on another node", change: func(_ *rerun.Record, p *scheduler.Plan) { p.Placements[1].NodeID = "n3" },
			want: []rerun.Change{{Kind: rerun.KindPlacement, ID: "a-2", Recorded: true, Recomputed: true,
				Fields: []rerun.Field{{Name: "NodeID", Recorded: "n2", Recomputed: "n3"}}}}},
		{name: "other resources", change: func(_ *rerun.Record, p *scheduler.Plan) { p.Placements[0].Resources.CPU = 200 },
			want: []rerun.Change{{Kind: rerun.KindPlacement, ID: "a-1", Recorded: true, Recomputed: true,
				Fields: []rerun.Field{{Name: "Resources", Recorded: "{CPU:100 MemoryMB:64 DiskMB:0 MemoryMaxMB:0}", Recomputed: "{CPU:200 MemoryMB:64 DiskMB:0 MemoryMaxMB:0}"}}}}},
		{name: "placement not recomputed", change: func(_ *rerun.Record, p *scheduler.Plan) { p.Placements = p.Placements[:1] },
			want: []rerun.Change{{Kind: rerun.KindPlacement, ID: "a-2", Recorded: true, Fields: []rerun.Field{
				{Name: "Name", Recorded: "web.web[1]"}, {Name: "NodeID", Recorded: "n2"}, {Name: "Resources", Recorded: "{CPU:100 MemoryMB:64 DiskMB:0 MemoryMaxMB:0}"}}}}},
		{name: "placement only recomputed", change: func(rec *rerun.Record, _ *scheduler.Plan) {
			rec.Final.Placements = rec.Final.Placements[1:]
		}, want: []rerun.Change{{Kind: rerun.KindPlacement, ID: "a-1", Recomputed: true, Fields: []rerun.Field{
			{Name: "Name", Recomputed: "web.web[0]"}, {Name: "NodeID", Recomputed: "n1"}, {Name: "Resources", Recomputed: "{CPU:100 MemoryMB:64 DiskMB:0 MemoryMaxMB:0}"}}}}},
		{name: "placements in another order", change: func(_ *rerun.Record, p *scheduler.Plan) {
			p.Placements[0], p.Placements[1] = p.Placements[1], p.Placements[0]
		}, want: []rerun.Change{{Kind: rerun.KindOrder, ID: "placement", Recorded: true, Recomputed: true,
			Fields: []rerun.Field{{Name: "ids", Recorded: "a-1,a-2", Recomputed: "a-2,a-1"}}}}},
		{name: "stopped with another description", change: func(_ *rerun.Record, p *scheduler.Plan) {
			p.Stops[0].DesiredDescription = "alloc is lost since its node is down"
			p.Stops[0].ClientStatus = events.AllocClientLost
		}, want: []rerun.Change{{Kind: rerun.KindStop, ID: "a-old", Recorded: true, Recomputed: true, Fields: []rerun.Field{
			{Name: "DesiredDescription", Recorded: "alloc not needed due to job update", Recomputed: "alloc is lost since its node is down"},
			{Name: "ClientStatus", Recorded: "", Recomputed: "lost"}}}}},
		{name: "update not recomputed", change: func(_ *rerun.Record, p *scheduler.Plan) { p.Updates = nil },
			want: []rerun.Change{{Kind: rerun.KindUpdate, ID: "a-dis", Recorded: true, Fields: []rerun.Field{
				{Name: "DesiredDescription", Recorded: "alloc is unknown since its node is disconnected"},
				{Name: "ClientStatus", Recorded: "unknown"}}}}},
		{name: "follow-up at another time", change: func(_ *rerun.Record, p *scheduler.Plan) { p.FollowUps[0].WaitUntil = 6e18 },
			want: []rerun.Change{{Kind: rerun.KindFollowUp, ID: "f-1", Recorded: true, Recomputed: true,
				Fields: []rerun.Field{{Name: "WaitUntil", Recorded: "5000000000000000000", Recomputed: "6000000000000000000"}}}}},
		{name: "no blocked eval recomputed", change: func(_ *rerun.Record, p *scheduler.Plan) {
			p.CreateBlockedEval, p.ClassEligibility = false, nil
		}, want: []rerun.Change{{Kind: rerun.KindBlocked, ID: scheduler.DeriveID("e-1", "blocked", 0), Recorded: true,
			Fields: []rerun.Field{{Name: "ClassEligibility", Recorded: "map[compute:true]"}}}}},
		{name: "queued and failed differ", change: func(_ *rerun.Record, p *scheduler.Plan) {
			p.QueuedAllocations["web"] = 2
			p.FailedTGAllocs["web"].NodesEvaluated = 4
		}, want: []rerun.Change{
			{Kind: rerun.KindQueued, ID: "web", Recorded: true, Recomputed: true, Fields: []rerun.Field{{Name: "queued", Recorded: "1", Recomputed: "2"}}},
			{Kind: rerun.KindFailed, ID: "web", Recorded: true, Recomputed: true, Fields: []rerun.Field{{Name: "failed",
				Recorded:   "{NodesEvaluated:3 NodesFiltered:0 NodesInPool:0 NodesAvailable:map[] ClassFiltered:map[] ConstraintFiltered:map[] NodesExhausted:3 ClassExhausted:map[] DimensionExhausted:map[memory:3] CoalescedFailures:0}",
				Recomputed: "{NodesEvaluated:4 NodesFiltered:0 NodesInPool:0 NodesAvailable:map[] ClassFiltered:map[] ConstraintFiltered:map[] NodesExhausted:3 ClassExhausted:map[] DimensionExhausted:map[memory:3] CoalescedFailures:0}"}}}}},
		{name: "snapshot index", change: func(_ *rerun.Record, p *scheduler.Plan) { p.SnapshotIndex = 41 },
			want: []rerun.Change{{Kind: rerun.KindSnapshot, ID: "e-1", Recorded: true, Recomputed: true,
				Fields: []rerun.Field{{Name: "SnapshotIndex", Recorded: "40", Recomputed: "41"}}}}},
		{name: "empty and nil maps are equal, Complete is not logged", change: func(rec *rerun.Record, p *scheduler.Plan) {
			p.Complete = true
			p.Placements[0].TaskStates = map[string]*events.TaskState{}
		}},
		{name: "earlier attempts refused in part are no divergence", change: func(rec *rerun.Record, _ *scheduler.Plan) {
			rec.Earlier = []rerun.Commit{{Index: 38, Placements: []events.Allocation{{ID: "a-0", NodeID: "n1"}}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, p := decided()
			if tc.change != nil {
				tc.change(rec, p)
			}
			d := rerun.Diff(rec, p)
			if !reflect.DeepEqual(d.Changes, tc.want) {
				t.Fatalf("changes:\n%#v\nwant\n%#v\n%s", d.Changes, tc.want, d)
			}
			if d.Empty() != (len(tc.want) == 0) {
				t.Fatalf("Empty() = %v with %d changes", d.Empty(), len(tc.want))
			}
		})
	}
}

func TestDiffString(t *testing.T) {
	rec, p := decided()
	rec.Earlier = []rerun.Commit{{Index: 38, Placements: make([]events.Allocation, 2)}}
	if got := rerun.Diff(rec, p).String(); !strings.Contains(got, "reproduces the recorded plan") ||
		!strings.Contains(got, "earlier attempt committed at 38, the rest refused by the plan applier: 2 placements") {
		t.Fatalf("String() = %q", got)
	}
	p.Placements[1].NodeID = "n3"
	p.Stops = nil
	got := rerun.Diff(rec, p).String()
	for _, want := range []string{
		"eval e-1: 2 divergences",
		"placement a-2: differs (NodeID n2 → n3)",
		"stop a-old: recorded, not recomputed (DesiredStatus stop, DesiredDescription alloc not needed due to job update)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("String() lacks %q:\n%s", want, got)
		}
	}
}

// An eval never completed has nothing to compare against: every
// recomputed item is reported.
func TestDiffUndecided(t *testing.T) {
	_, p := decided()
	d := rerun.Diff(&rerun.Record{EvalID: "e-1"}, p)
	if d.Empty() || d.Changes[0].Kind != rerun.KindPlacement || d.Changes[0].Recorded {
		t.Fatalf("diff of an undecided record: %s", d)
	}
}
