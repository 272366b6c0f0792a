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
	"github.com/ordoplane/ordo/projections/fsm"
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
// sequence returns a function applying its payloads to f as the entry at
// *idx, which it then moves on; a rejected entry fails the test.
func sequence(t *testing.T, f *fsm.FSM, idx *uint64) func(ps ...events.Payload) {
	return func(ps ...events.Payload) {
		t.Helper()
		if res := pt.ApplyOne(t, f, *idx, pt.Entry(t, fmt.Sprint("c", *idx), ps...)); res.Err != nil {
			t.Fatalf("entry %d: %v", *idx, res.Err)
		}
		*idx++
	}
}

func world(t *testing.T) (*kv.Store, *fsm.FSM, uint64) {
	t.Helper()
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, all.Projections()...)
	idx := uint64(1)
	apply := sequence(t, f, &idx)
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

// N4: the entry carries (filter, from, to, page size); apply re-creates the page
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
	// It says what each deleted eval was and where it sat (g1 and g2 were
	// created by entries 5 and 6), so projections need not read the rows.
	if want := []events.DeletedEval{{Namespace: "default", JobID: "gone", CreateIndex: 5}, {Namespace: "default", JobID: "gone", CreateIndex: 6}}; !reflect.DeepEqual(page.Deleted, want) {
		t.Fatalf("archived page's Deleted = %+v, want %+v", page.Deleted, want)
	}
	// The next page resumes at Next; a scan limit of 2 stops before g5.
	pt.ApplyOne(t, f, idx, pt.Entry(t, "del2", &events.EvalsPageDeleted{Filter: filter, From: page.Next, PageSize: 10, ScanLimit: 2}))
	idx++
	if got := ids(t, v); !reflect.DeepEqual(got, []string{"l1", "l2", "g5", "c1"}) {
		t.Fatalf("evals after page 2 = %v", got)
	}
	pt.CheckRebuildEqualsLive(t, store, all.Projections()...)
}

// deleteByID applies a delete by id of evalID with its N6 precondition and
// reports whether it was refused.
func deleteByID(t *testing.T, f *fsm.FSM, idx uint64, evalID string) bool {
	t.Helper()
	e := pt.Entry(t, fmt.Sprint("byid", idx), &events.EvalsDeleted{IDs: []string{evalID}})
	e.Preconditions = []events.Precondition{{Table: evals.Table, Key: evalID, Op: evaldelete.OpDeletable}}
	res := pt.ApplyOne(t, f, idx, e)
	var rej *fsm.RejectedError
	if res.Err != nil && !errors.As(res.Err, &rej) {
		t.Fatalf("delete %s: %v", evalID, res.Err)
	}
	return res.Err != nil
}

// N6: an eval may be deleted only when its job AND all its allocations
// are terminal, decided at apply against the state the entry applies to.
// The looser rule (job terminal OR allocations terminal) fails both
// halves: it deletes l2 while its job is live (its alloc completed), and
// l1 once the job stopped while l1's alloc still runs.
func TestSafetyDecidedAtApply(t *testing.T) {
	store, f, idx := world(t)
	v := projections.NewView(store)
	live := `JobID == "live"`
	// Job live: neither eval goes, though l2's alloc completed.
	pt.ApplyOne(t, f, idx, pt.Entry(t, "del", &events.EvalsPageDeleted{Filter: live, PageSize: 10}))
	idx++
	if got := ids(t, v); !reflect.DeepEqual(got, []string{"l1", "l2", "g1", "g2", "g3", "g4", "g5", "c1"}) {
		t.Fatalf("evals = %v, want l1 and l2 kept (their job is live)", got)
	}
	if !deleteByID(t, f, idx, "l2") {
		t.Fatal("delete by id of l2 (job live, alloc complete) was not refused")
	}
	idx++
	// The job stops: l2 goes, l1 stays while its alloc runs.
	pt.ApplyOne(t, f, idx, pt.Entry(t, "stop", &events.JobDeregistered{Namespace: "default", ID: "live"}))
	idx++
	if !deleteByID(t, f, idx, "l1") {
		t.Fatal("delete by id of l1 (job stopped, alloc running) was not refused")
	}
	idx++
	pt.ApplyOne(t, f, idx, pt.Entry(t, "del2", &events.EvalsPageDeleted{Filter: live, PageSize: 10}))
	idx++
	if got := ids(t, v); !reflect.DeepEqual(got, []string{"l1", "g1", "g2", "g3", "g4", "g5", "c1"}) {
		t.Fatalf("evals = %v, want l1 kept (its alloc runs), l2 deleted", got)
	}
	// The alloc completes: now l1 goes too.
	pt.ApplyOne(t, f, idx, pt.Entry(t, "done", &events.AllocsClientUpdated{NodeID: "n1",
		Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}}))
	idx++
	if deleteByID(t, f, idx, "l1") {
		t.Fatal("delete by id of a safe eval was refused")
	}
	if _, err := evals.Get(v, "l1"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("l1 after delete: %v", err)
	}
	pt.CheckRebuildEqualsLive(t, store, all.Projections()...)
}

// A stopped job with more allocations than Safety reads at once is
// checked eval by eval: the eval whose alloc runs is kept, the one whose
// allocs all completed goes.
func TestManyAllocsCheckedPerEval(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, all.Projections()...)
	idx := uint64(1)
	apply := sequence(t, f, &idx)
	apply(job("big"))
	apply(&events.EvalsUpserted{Evals: []events.Evaluation{eval("done", "big", events.EvalStatusComplete), eval("runs", "big", events.EvalStatusComplete)}})
	var done []events.Allocation
	for i := range 70 {
		done = append(done, alloc(fmt.Sprintf("d%02d", i), "done", "big", events.AllocClientComplete))
	}
	apply(&events.AllocsPlaced{EvalID: "done", Allocs: done})
	apply(&events.AllocsPlaced{EvalID: "runs", Allocs: []events.Allocation{alloc("r", "runs", "big", events.AllocClientRunning)}})
	apply(&events.JobDeregistered{Namespace: "default", ID: "big"})
	page, err := evaldelete.Walk(projections.NewView(store), nil, "", "", 100, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(page.IDs, []string{"done"}) || page.Skipped != 1 {
		t.Fatalf("page = %+v, want done deleted and runs skipped", page)
	}
}

// A page with a To stops there whatever its size: pages of disjoint
// ranges can be in flight together. Next is To when the walk reached it.
func TestPageStopsAtTo(t *testing.T) {
	store, f, idx := world(t)
	v := projections.NewView(store)
	whole, err := evaldelete.Walk(v, nil, "", "", 100, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	// Keys in creation order: l1 l2 g1 g2 g3 g4 g5 c1; To = g3's key.
	var keys []string
	if err := v.Scan(evals.ByCreateTable, "", false, func(k string, _ projections.Row) error {
		keys = append(keys, k)
		return nil
	}); err != nil || len(keys) != 8 || len(whole.IDs) != 8 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	res := pt.ApplyOne(t, f, idx, pt.Entry(t, "to", &events.EvalsPageDeleted{Filter: `Status == "pending"`,
		From: keys[2], To: keys[4], PageSize: 10, ScanLimit: 40}))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := ids(t, v); !reflect.DeepEqual(got, []string{"l1", "l2", "g3", "g4", "g5", "c1"}) {
		t.Fatalf("evals after a page to g3 = %v", got)
	}
	arch := pt.Archived(t, store)
	p, err := events.Decode(arch[len(arch)-1])
	if err != nil {
		t.Fatal(err)
	}
	if page := p.(*events.EvalsPageDeleted); page.Next != keys[4] || page.To != keys[4] {
		t.Fatalf("archived page = %+v, want Next = To", page)
	}
	// A page stopped by its size before To says where it stopped.
	page, err := evaldelete.Walk(v, nil, keys[4], keys[7], 1, 0, true)
	if err != nil || page.Next != keys[5] || !reflect.DeepEqual(page.IDs, []string{"g3"}) {
		t.Fatalf("page of 1 = %+v, %v", page, err)
	}
	// SpanEnd counts index keys (g1 and g2 are gone): the key after n, or
	// To, or "" at the end.
	for _, c := range []struct {
		from, to string
		n        int
		want     string
	}{{keys[0], "", 3, keys[5]}, {keys[5], "", 10, ""}, {keys[0], keys[2], 5, keys[2]}, {keys[1], "", 0, keys[1]}} {
		if got, err := evaldelete.SpanEnd(v, c.from, c.to, c.n); err != nil || got != c.want {
			t.Errorf("SpanEnd(%q, %q, %d) = %q, %v; want %q", c.from, c.to, c.n, got, err, c.want)
		}
	}
	// A range past the end of the table ends at To.
	if page, err := evaldelete.Walk(v, nil, keys[7], keys[7]+"~", 10, 0, true); err != nil || page.Next != keys[7]+"~" {
		t.Fatalf("page to past the end = %+v, %v", page, err)
	}
	pt.CheckRebuildEqualsLive(t, store, all.Projections()...)
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
		if _, err := evaldelete.Walk(v, flt, "", "", 2000, 8000, true); err != nil {
			b.Fatal(err)
		}
	}
}

// A page over evals of several jobs reads which jobs exist in one scan:
// the evals of the live job are skipped, those of the job that never
// existed go.
func TestPageOverLiveAndGoneJobs(t *testing.T) {
	store, f, idx := world(t)
	v := projections.NewView(store)
	pt.ApplyOne(t, f, idx, pt.Entry(t, "other", &events.EvalsUpserted{Evals: []events.Evaluation{
		eval("a1", "aaa-gone", events.EvalStatusPending), eval("z1", "zzz-gone", events.EvalStatusPending)}}))
	page, err := evaldelete.Walk(v, nil, "", "", 100, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"g1", "g2", "g3", "g4", "g5", "c1", "a1", "z1"}; !reflect.DeepEqual(page.IDs, want) || page.Skipped != 2 {
		t.Fatalf("page = %+v, want %v deleted and l1, l2 skipped", page, want)
	}
}

// refWalk is Walk the simple way, the one Walk replaced: one eval read
// per creation key (no chunks, no range scans of the evals table).
func refWalk(t *testing.T, v projections.View, f *evaldelete.Filter, from, to string, pageSize, scanLimit int) evaldelete.Page {
	t.Helper()
	var p evaldelete.Page
	var sel []*events.Evaluation
	stop := errors.New("stop")
	err := v.ScanFrom(evals.ByCreateTable, "", from, false, func(key string, _ projections.Row) error {
		if to != "" && key >= to {
			p.Next = to
			return stop
		}
		if p.Selected >= pageSize || (scanLimit > 0 && p.Scanned >= scanLimit) {
			p.Next = key
			return stop
		}
		p.Scanned++
		e, err := evals.Get(v, key[21:])
		if errors.Is(err, projections.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if ok, err := evaldelete.Match(f, &e.Evaluation); err != nil || !ok {
			return err
		}
		p.Selected++
		if p.First == "" {
			p.First = key
		}
		sel = append(sel, &e.Evaluation)
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		t.Fatal(err)
	}
	if p.Next == "" && to != "" {
		p.Next = to
	}
	safe, err := evaldelete.NewSafety(v).SafeAll(sel)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range sel {
		if !safe[i] {
			p.Skipped++
			continue
		}
		p.IDs = append(p.IDs, e.ID)
		p.Deleted = append(p.Deleted, events.DeletedEval{Namespace: e.Namespace, JobID: e.JobID, CreateIndex: e.CreateIndex})
	}
	return p
}

// A page reads its evals with range scans of the evals table where their
// ids lie close together and point reads where other evals lie between
// them: every page, of every size and scan limit, from every position,
// is the one the eval-by-eval walk makes, and deleting the evals page by
// page leaves what the filter does not select; a rebuild equals live.
func TestPagesOverScatteredIDs(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, all.Projections()...)
	idx := uint64(1)
	apply := sequence(t, f, &idx)
	apply(job("live"))
	// Dense: p-00..p-39 pending, in id order. Scattered: s-00..s-19
	// pending, created in reverse id order, with 30 complete evals
	// between each two in id order (created first), and pending evals of
	// the live job (unsafe) among them.
	var batch []events.Evaluation
	for i := range 40 {
		st := events.EvalStatusPending
		if i%7 == 3 {
			st = events.EvalStatusComplete
		}
		batch = append(batch, eval(fmt.Sprintf("p-%02d", i), "gone", st))
	}
	apply(&events.EvalsUpserted{Evals: batch})
	batch = nil
	for i := range 20 {
		for j := range 30 {
			batch = append(batch, eval(fmt.Sprintf("s-%02d-%02d", i, j), "gone", events.EvalStatusComplete))
		}
	}
	apply(&events.EvalsUpserted{Evals: batch})
	for i := 19; i >= 0; i-- {
		j := "gone"
		if i%5 == 2 {
			j = "live"
		}
		apply(&events.EvalsUpserted{Evals: []events.Evaluation{eval(fmt.Sprintf("s-%02d", i), j, events.EvalStatusPending)}})
	}
	v := projections.NewView(store)
	var keys []string
	if err := v.Scan(evals.ByCreateTable, "", false, func(k string, _ projections.Row) error {
		keys = append(keys, k)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	filter := `Status == "pending"`
	flt, err := evaldelete.Compile(filter)
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"", keys[5], keys[39], keys[40], keys[645]} {
		for _, to := range []string{"", keys[45], keys[650]} {
			for _, size := range []int{1, 3, 10, 100} {
				for _, limit := range []int{0, 4, 40} {
					if to != "" && to <= from {
						continue
					}
					got, err := evaldelete.Walk(v, flt, from, to, size, limit, true)
					if err != nil {
						t.Fatal(err)
					}
					if want := refWalk(t, v, flt, from, to, size, limit); !reflect.DeepEqual(got, want) {
						t.Fatalf("Walk(%q, %q, %d, %d) = %+v, want %+v", from, to, size, limit, got, want)
					}
				}
			}
		}
	}
	for from := ""; ; {
		res := pt.ApplyOne(t, f, idx, pt.Entry(t, "", &events.EvalsPageDeleted{Filter: filter, From: from, PageSize: 3, ScanLimit: 12}))
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		idx++
		arch := pt.Archived(t, store)
		p, err := events.Decode(arch[len(arch)-1])
		if err != nil {
			t.Fatal(err)
		}
		if from = p.(*events.EvalsPageDeleted).Next; from == "" {
			break
		}
	}
	for _, id := range ids(t, v) {
		e, err := evals.Get(v, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status == events.EvalStatusPending && e.JobID != "live" {
			t.Errorf("pending eval %s of a gone job survived", id)
		}
	}
	if n := len(ids(t, v)); n != 600+6+4 {
		t.Errorf("%d evals left, want 610 (600 complete, 6 complete p-, 4 of the live job)", n)
	}
	pt.CheckRebuildEqualsLive(t, store, all.Projections()...)
}
