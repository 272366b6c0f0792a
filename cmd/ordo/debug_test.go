package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// TestDebugReschedule: every decision of a real workload re-runs equal
// through `ordo debug reschedule` (exit 0), by id prefix, in text and
// JSON; an unknown eval is an error (exit 1).
func TestDebugReschedule(t *testing.T) {
	w := startWorkload(t)
	_, evalIDs := w.ids(t)
	applied := w.a.FSM().Applied()
	for _, id := range evalIDs {
		code, stdout, stderr := runCLI("debug", "reschedule", "-address", w.addr, "-eval", id[:len(id)-2])
		if code != 0 {
			t.Errorf("eval %s: exit %d\n%s%s", id, code, stdout, stderr)
			continue
		}
		for _, want := range []string{"Eval ID        = " + id, "the re-run reproduces the recorded plan",
			"Placements (task group, node)", "Recorded", "Recomputed", "host-", "Stops", "Diff\nNone: the recomputed plan equals the recorded one"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("eval %s: output lacks %q:\n%s", id, want, stdout)
			}
		}
		if strings.Contains(stdout, "<> differs") {
			t.Errorf("eval %s: a row differs:\n%s", id, stdout)
		}
	}
	code, stdout, _ := runCLI("debug", "reschedule", "-address", w.addr, "-json", evalIDs[0])
	var res rerun.Result
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil || !res.Equal || res.EvalID != evalIDs[0] || len(res.Recorded.Placements) == 0 {
		t.Errorf("-json: exit %d, %v, %+v", code, err, res)
	}
	if code, _, stderr := runCLI("debug", "reschedule", "-address", w.addr, "-eval", "nope"); code != 1 || !strings.Contains(stderr, `evaluation "nope" not found`) {
		t.Errorf("unknown eval: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCLI("debug", "reschedule", "-address", w.addr); code != 1 || !strings.Contains(stderr, "-eval <id> is required") {
		t.Errorf("no eval: exit %d %q", code, stderr)
	}
	if w.a.FSM().Applied() != applied {
		t.Errorf("re-runs moved the applied index from %d to %d", applied, w.a.FSM().Applied())
	}
}

// TestDebugRescheduleDiffers: a re-run that diverges prints both sides,
// marks the rows that differ, lists the diff and exits 2.
func TestDebugRescheduleDiffers(t *testing.T) {
	place := func(id, node string) events.Allocation {
		return events.Allocation{ID: id, Name: "web.web[0]", TaskGroup: "web", NodeID: node}
	}
	migrate := true
	stop := events.AllocDesiredUpdate{ID: "old-alloc-1", DesiredStatus: "stop", DesiredDescription: "alloc not needed due to job update"}
	res := rerun.Result{
		EvalID: "e-1", Eval: events.Evaluation{ID: "e-1", Namespace: "default", JobID: "web", Type: "service", TriggeredBy: "job-register"},
		SnapshotIndex: 41,
		Recorded: &scheduler.Plan{EvalID: "e-1", SnapshotIndex: 41, Placements: []events.Allocation{place("a-1", "n1")},
			Stops: []events.AllocDesiredUpdate{stop}, CreateBlockedEval: true, ClassEligibility: map[string]bool{"compute": true},
			QueuedAllocations: map[string]int{"web": 1}},
		Recomputed: &scheduler.Plan{EvalID: "e-1", SnapshotIndex: 41, Placements: []events.Allocation{place("a-1", "n2")},
			QueuedAllocations: map[string]int{"web": 1}},
		Diff: []rerun.Change{
			{Kind: rerun.KindPlacement, ID: "a-1", Recorded: true, Recomputed: true, Fields: []rerun.Field{{Name: "NodeID", Recorded: "n1", Recomputed: "n2"}}},
			{Kind: rerun.KindStop, ID: "old-alloc-1", Recorded: true, Fields: []rerun.Field{{Name: "DesiredStatus", Recorded: "stop"}}},
		},
		EarlierAttempts: []rerun.Commit{{Index: 39, Placements: make([]events.Allocation, 2)}},
		Trigger: &rerun.Commit{Index: 38, Updates: []events.AllocDesiredUpdate{
			{ID: "old-alloc-2", DesiredTransition: events.DesiredTransition{Migrate: &migrate}}}},
		Allocs: map[string]rerun.AllocRef{"old-alloc-1": {Name: "web.web[3]", NodeID: "n3"}},
		Nodes:  map[string]string{"n1": "host-1", "n2": "host-2", "n3": "host-3"},
	}
	b, _ := json.Marshal(res)
	api := &fakeAPI{status: 200, answer: string(b)}
	addr := api.start(t)
	code, stdout, stderr := runCLI("debug", "reschedule", "-address", addr, "-eval", "e-1")
	if code != rescheduleExitDiffers || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if api.uri != "/v1/debug/reschedule/e-1" {
		t.Errorf("asked %s", api.uri)
	}
	for _, want := range []string{
		"the re-run differs from the recorded plan (2 differences)",
		"web         n1 (host-1)  web.web[0]  -           <> differs",
		"web         n2 (host-2)  -           web.web[0]  <> differs",
		"old-allo  web.web[3]  n3 (host-3)  stop: alloc not needed due to job update  -           <> differs",
		"blocked eval       yes (compute=true)  -           <> differs",
		"placement a-1: differs (NodeID n1 → n2)",
		"stop old-alloc-1: recorded, not recomputed (DesiredStatus stop)",
		"committed at 39: 2 placements",
		"Triggered by (committed with the eval at 38; not re-run)\nallocation old-alloc-2 marked for migration by the node drainer",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}
