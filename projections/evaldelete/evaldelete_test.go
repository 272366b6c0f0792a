package evaldelete_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/evaldelete"
	"github.com/ordoplane/ordo/projections/evals"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

func eval(id, job, status string) events.Evaluation {
	return events.Evaluation{ID: id, Namespace: "default", Priority: 50, Type: events.JobTypeService,
		TriggeredBy: events.EvalTriggerJobRegister, JobID: job, Status: status, CreateTime: pt.LeaderTime}
}

func job(id string) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Namespace: "default", Type: events.JobTypeService,
		TaskGroups: []events.TaskGroup{{Name: "web", Count: 1}}}}
}

func alloc(id, evalID, job, client string) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", EvalID: evalID, Name: job + ".web[0]", NodeID: "n1",
		JobID: job, TaskGroup: "web", DesiredStatus: events.AllocDesiredRun, ClientStatus: client}
}

// world builds: job "live" (registered) with eval l1 whose alloc runs and
// eval l2 whose alloc completed; evals g1..g5 pending for a job that was
// never registered (gone); c1 complete for the gone job.
func world(t *testing.T) (*kv.Store, *projections.FSM, uint64) {
	t.Helper()
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, all.Projections()...)
	idx := uint64(1)
	apply := func(ps ...events.Payload) {
		t.Helper()
		if res := pt.ApplyOne(t, f, idx, pt.Entry(t, fmt.Sprint("c", idx), ps...)); res.Err != nil {
			t.Fatalf("entry %d: %v", idx, res.Err)
		}
		idx++
	}
	apply(job("live"))
	apply(&events.EvalsUpserted{Evals: []events.Evaluation{eval("l1", "live", events.EvalStatusComplete), eval("l2", "live", events.EvalStatusComplete)}})
	apply(&events.AllocsPlaced{EvalID: "l1", Allocs: []events.Allocation{alloc("a1", "l1", "live", events.AllocClientRunning)}})
	apply(&events.AllocsPlaced{EvalID: "l2", Allocs: []events.Allocation{alloc("a2", "l2", "live", events.AllocClientComplete)}})
	for i := 1; i <= 5; i++ {
		apply(&events.EvalsUpserted{Evals: []events.Evaluation{eval(fmt.Sprint("g", i), "gone", events.EvalStatusPending)}})
	}
	apply(&events.EvalsUpserted{Evals: []events.Evaluation{eval("c1", "gone", events.EvalStatusComplete)}})
	return store, f, idx
}

func ids(t *testing.T, v projections.View) []string {
	t.Helper()
	var out []string
	if err := evals.Scan(v, evals.Query{Namespace: "*"}, func(e *evals.Eval) error {
		out = append(out, e.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func rebuildEqualsLive(t *testing.T, live *kv.Store) {
	t.Helper()
	dst := pt.OpenStore(t)
	projs := all.Projections()
	if _, err := projections.Rebuild(live, dst, projs, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pt.Checksums(t, dst, projs), pt.Checksums(t, live, projs)) {
		t.Fatal("rebuilt projections differ from live")
	}
}

// N4: the entry carries (filter, from, page size); apply re-creates the page
// from the state and the archive records what it deleted, so a rebuild
// (which replays EvalsPageDeleted without the jobs and allocs tables)
// equals live.
func TestPageDeletedAtApply(t *testing.T) {
	store, f, idx := world(t)
	v := projections.NewView(store)
	filter := `Status == "pending"`
	// The page of 2 from the start: the walk passes l1, l2 (not selected)
	// and deletes g1, g2.
	res := pt.ApplyOne(t, f, idx, pt.Entry(t, "del1", &events.EvalsPageDeleted{Filter: filter, PageSize: 2, ScanLimit: 100}))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	idx++
	if got := ids(t, v); !reflect.DeepEqual(got, []string{"l1", "l2", "g3", "g4", "g5", "c1"}) {
		t.Fatalf("evals after page 1 = %v", got)
	}
	arch := pt.Archived(t, store)
	last := arch[len(arch)-1]
	p, err := events.Decode(last)
	if err != nil {
		t.Fatal(err)
	}
	page := p.(*events.EvalsPageDeleted)
	if !reflect.DeepEqual(page.IDs, []string{"g1", "g2"}) || page.Next == "" || last.Key(events.KindEval) != "g1" {
		t.Fatalf("archived page = %+v keys %v", page, last.Keys)
	}
	// The next page resumes at Next; a scan limit of 2 stops before g5.
	pt.ApplyOne(t, f, idx, pt.Entry(t, "del2", &events.EvalsPageDeleted{Filter: filter, From: page.Next, PageSize: 10, ScanLimit: 2}))
	idx++
	if got := ids(t, v); !reflect.DeepEqual(got, []string{"l1", "l2", "g5", "c1"}) {
		t.Fatalf("evals after page 2 = %v", got)
	}
	rebuildEqualsLive(t, store)
}

// N6: the safety check is decided at apply, against the state the entry
// applies to, not a handler's snapshot: an eval whose job is live and
// whose allocation runs is skipped by a page and refuses a delete by id;
// once the alloc completes, the same page deletes it.
func TestSafetyDecidedAtApply(t *testing.T) {
	store, f, idx := world(t)
	v := projections.NewView(store)
	pt.ApplyOne(t, f, idx, pt.Entry(t, "del", &events.EvalsPageDeleted{Filter: `JobID == "live"`, PageSize: 10}))
	idx++
	if got := ids(t, v); !reflect.DeepEqual(got, []string{"l1", "g1", "g2", "g3", "g4", "g5", "c1"}) {
		t.Fatalf("evals = %v, want l1 kept (its alloc runs), l2 deleted", got)
	}
	e := pt.Entry(t, "byid", &events.EvalsDeleted{IDs: []string{"l1"}})
	e.Preconditions = []events.Precondition{{Table: evals.Table, Key: "l1", Op: evaldelete.OpDeletable}}
	res := pt.ApplyOne(t, f, idx, e)
	idx++
	var rej *projections.RejectedError
	if !errors.As(res.Err, &rej) {
		t.Fatalf("delete by id of an unsafe eval: %v, want a rejection", res.Err)
	}
	// The alloc completes: now both paths delete l1.
	pt.ApplyOne(t, f, idx, pt.Entry(t, "done", &events.AllocsClientUpdated{NodeID: "n1",
		Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}}))
	idx++
	e = pt.Entry(t, "byid2", &events.EvalsDeleted{IDs: []string{"l1"}})
	e.Preconditions = []events.Precondition{{Table: evals.Table, Key: "l1", Op: evaldelete.OpDeletable}}
	if res := pt.ApplyOne(t, f, idx, e); res.Err != nil {
		t.Fatalf("delete by id of a safe eval: %v", res.Err)
	}
	if _, err := evals.Get(v, "l1"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("l1 after delete: %v", err)
	}
	rebuildEqualsLive(t, store)
}

// A stopped job makes its evals safe whatever their allocs say.
func TestStoppedJobMakesEvalsSafe(t *testing.T) {
	store, f, idx := world(t)
	pt.ApplyOne(t, f, idx, pt.Entry(t, "stop", &events.JobDeregistered{Namespace: "default", ID: "live"}))
	page, err := evaldelete.Walk(projections.NewView(store), nil, "", 100, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if page.Skipped != 0 || len(page.IDs) != 8 || page.Next != "" {
		t.Fatalf("page after stop = %+v", page)
	}
}

// N15: deleting evals that are already gone moves no table index, so
// blocking queries on evals do not wake.
func TestDeletingNothingMovesNoIndex(t *testing.T) {
	store, f, idx := world(t)
	before := pt.TableIndex(t, store, evals.Table)
	pt.ApplyOne(t, f, idx, pt.Entry(t, "none", &events.EvalsDeleted{IDs: []string{"missing"}}))
	pt.ApplyOne(t, f, idx+1, pt.Entry(t, "nopage", &events.EvalsPageDeleted{Filter: `Status == "nope"`, PageSize: 10}))
	for _, table := range []string{evals.Table, evals.ByCreateTable, evals.ByJobTable} {
		if got := pt.TableIndex(t, store, table); table == evals.Table && got != before {
			t.Fatalf("%s index moved %d → %d though nothing was removed", table, before, got)
		}
	}
}

func TestCompileNamesBadFilter(t *testing.T) {
	if _, err := evaldelete.Compile(`Status ==`); !errors.Is(err, evaldelete.ErrBadFilter) {
		t.Fatalf("Compile(bad) = %v", err)
	}
	f, err := evaldelete.Compile(`Status == "pending" and JobID matches "^g"`)
	if err != nil {
		t.Fatal(err)
	}
	e := eval("x", "gx", events.EvalStatusPending)
	if ok, err := evaldelete.Match(f, &e); !ok || err != nil {
		t.Fatalf("Match = %v, %v", ok, err)
	}
}

func BenchmarkPage(b *testing.B) {
	store := pt.OpenStore(b)
	f := pt.NewFSM(b, store, all.Projections()...)
	idx := uint64(1)
	const n = 20000
	for i := 0; i < n; i += 1000 {
		var batch []events.Evaluation
		for j := i; j < i+1000; j++ {
			batch = append(batch, eval(fmt.Sprintf("e%07d", j), fmt.Sprint("job", j%50), events.EvalStatusPending))
		}
		pt.ApplyOne(b, f, idx, pt.Entry(b, fmt.Sprint("seed", idx), &events.EvalsUpserted{Evals: batch}))
		idx++
	}
	v := projections.NewView(store)
	flt, _ := evaldelete.Compile(`Status == "pending"`)
	b.ResetTimer()
	for range b.N {
		if _, err := evaldelete.Walk(v, flt, "", 2000, 8000, true); err != nil {
			b.Fatal(err)
		}
	}
}
