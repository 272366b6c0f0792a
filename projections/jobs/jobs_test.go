package jobs_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/jobs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
)

type fixture struct {
	t     *testing.T
	store *kv.Store
	fsm   *fsm.FSM
	index uint64
}

func newFixture(t *testing.T) *fixture {
	store := pt.OpenStore(t)
	return &fixture{t: t, store: store, fsm: pt.NewFSM(t, store)}
}

func (f *fixture) apply(payloads ...events.Payload) {
	f.t.Helper()
	f.index++
	if res := pt.ApplyOne(f.t, f.fsm, f.index, pt.Entry(f.t, "", payloads...)); res.Err != nil {
		f.t.Fatal(res.Err)
	}
}

func (f *fixture) summary(ns, id string) map[string]jobs.TaskGroupSummary {
	f.t.Helper()
	s, err := jobs.GetSummary(projections.NewView(f.store), ns, id)
	if err != nil {
		f.t.Fatalf("summary %s/%s: %v", ns, id, err)
	}
	return s.Summary
}

func (f *fixture) job(ns, id string) *jobs.Job {
	f.t.Helper()
	j, err := jobs.Get(projections.NewView(f.store), ns, id)
	if err != nil {
		f.t.Fatalf("job %s/%s: %v", ns, id, err)
	}
	return j
}

func testJob(id string, version uint64, groups ...string) events.Job {
	j := events.Job{ID: id, Name: id, Namespace: "default", Type: events.JobTypeService, Priority: 50,
		Datacenters: []string{"*"}, NodePool: "default", Version: version}
	for _, g := range groups {
		j.TaskGroups = append(j.TaskGroups, events.TaskGroup{Name: g, Count: 2,
			Tasks: []events.Task{{Name: "t", Driver: "exec"}}})
	}
	return j
}

func alloc(id, job, group string) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", JobID: job, TaskGroup: group, NodeID: "n1",
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}
}

func TestSummaryCounts(t *testing.T) {
	f := newFixture(t)
	web := testJob("web", 0, "a", "b")
	f.apply(&events.JobRegistered{Job: web})
	if got := f.summary("default", "web"); !reflect.DeepEqual(got, map[string]jobs.TaskGroupSummary{"a": {}, "b": {}}) {
		t.Fatalf("initial summary = %+v", got)
	}
	// The eval could not place everything: queued counts come from it.
	f.apply(&events.EvalsUpserted{Evals: []events.Evaluation{{ID: "e1", Namespace: "default", JobID: "web",
		Status: events.EvalStatusComplete, QueuedAllocations: map[string]int{"a": 2, "b": 1, "zz": 4}}}})
	f.apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{alloc("a1", "web", "a"), alloc("a2", "web", "a"), alloc("b1", "web", "b")}})
	want := map[string]jobs.TaskGroupSummary{"a": {Starting: 2}, "b": {Starting: 1}}
	if got := f.summary("default", "web"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after placement = %+v", got)
	}
	if j := f.job("default", "web"); j.Status != jobs.StatusRunning {
		t.Fatalf("status = %s", j.Status)
	}
	f.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{
		{ID: "a1", ClientStatus: events.AllocClientRunning}, {ID: "a2", ClientStatus: events.AllocClientFailed},
		{ID: "b1", ClientStatus: events.AllocClientRunning}, {ID: "unknown-alloc", ClientStatus: events.AllocClientRunning}}})
	f.apply(&events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{
		{ID: "b1", DesiredStatus: events.AllocDesiredStop, ClientStatus: events.AllocClientLost},
		{ID: "a1", DesiredStatus: events.AllocDesiredStop}}})
	want = map[string]jobs.TaskGroupSummary{"a": {Running: 1, Failed: 1}, "b": {Lost: 1}}
	if got := f.summary("default", "web"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after updates = %+v", got)
	}

	// A report that changes no status changes no row (N15).
	before := pt.TableIndex(t, f.store, jobs.SummaryTable)
	f.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientRunning}}})
	if pt.TableIndex(t, f.store, jobs.SummaryTable) != before || pt.TableIndex(t, f.store, jobs.AllocsTable) == f.index {
		t.Fatal("a no-op alloc update moved a table index")
	}

	// A new group appears in the summary when a version adds it.
	f.apply(&events.JobRegistered{Job: testJob("web", 1, "a", "b", "c")})
	if got := f.summary("default", "web"); got["c"] != (jobs.TaskGroupSummary{}) || got["a"].Running != 1 {
		t.Fatalf("after version 1 = %+v", got)
	}

	// Stop, then purge and register again: the old allocations no longer count.
	f.apply(&events.JobDeregistered{Namespace: "default", ID: "web"})
	if j := f.job("default", "web"); !j.Stop || j.Version != 2 {
		t.Fatalf("stopped = %+v", j)
	}
	f.apply(&events.JobDeregistered{Namespace: "default", ID: "web", Purge: true})
	if _, err := jobs.GetSummary(projections.NewView(f.store), "default", "web"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("summary after purge: %v", err)
	}
	f.apply(&events.JobRegistered{Job: testJob("web", 0, "a")})
	f.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}})
	if got := f.summary("default", "web"); !reflect.DeepEqual(got, map[string]jobs.TaskGroupSummary{"a": {}}) {
		t.Fatalf("re-registered job counts an old allocation: %+v", got)
	}
	f.apply(&events.AllocsDeleted{IDs: []string{"a1", "a2", "b1"}})

	// Rebuilding from the archive gives the same tables.
	checkRebuild(t, f.store)
}

func TestListAndVersions(t *testing.T) {
	f := newFixture(t)
	ns := func(j events.Job, n string) events.Job { j.Namespace = n; return j }
	f.apply(&events.JobRegistered{Job: testJob("api", 0, "g")}, &events.JobRegistered{Job: testJob("web", 0, "g")},
		&events.JobRegistered{Job: ns(testJob("web", 0, "g"), "payments")}, &events.JobRegistered{Job: ns(testJob("apx", 0, "g"), "payments")})
	f.apply(&events.JobRegistered{Job: testJob("web", 1, "g")})
	v := projections.NewView(f.store)
	for _, tc := range []struct {
		ns, prefix string
		want       []string
	}{
		{"default", "", []string{"default/api", "default/web"}},
		{"default", "w", []string{"default/web"}},
		{"payments", "", []string{"payments/apx", "payments/web"}},
		{"*", "", []string{"default/api", "default/web", "payments/apx", "payments/web"}},
		{"*", "ap", []string{"default/api", "payments/apx"}},
		{"nope", "", nil},
	} {
		list, err := jobs.List(v, tc.ns, tc.prefix)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range list {
			got = append(got, s.Namespace+"/"+s.ID)
			if s.JobSummary == nil || s.Status != jobs.StatusPending {
				t.Errorf("stub %+v", s)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("List(%q, %q) = %v, want %v", tc.ns, tc.prefix, got, tc.want)
		}
	}
	vs, err := jobs.Versions(v, "default", "web")
	if err != nil || len(vs) != 2 || vs[0].Version != 1 || vs[0].ModifyIndex != 2 || vs[1].Version != 0 ||
		vs[1].ModifyIndex != 1 || vs[1].CreateIndex != 1 {
		t.Fatalf("versions = %+v, %v", vs, err)
	}
	if _, err := jobs.Versions(v, "default", "nope"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("versions of a missing job: %v", err)
	}
	checkRebuild(t, f.store)
}

func TestChildrenSummary(t *testing.T) {
	f := newFixture(t)
	parent := testJob("p", 0, "g")
	parent.Type = events.JobTypeBatch
	parent.ParameterizedJob = &events.ParameterizedJob{Payload: "optional"}
	f.apply(&events.JobRegistered{Job: parent})
	if j := f.job("default", "p"); j.Status != jobs.StatusRunning {
		t.Fatalf("parameterized parent status = %s", j.Status)
	}
	child := parent
	child.ID, child.ParentID, child.Dispatched = "p/dispatch-1", "p", true
	f.apply(&events.JobRegistered{Job: child})
	children := func() jobs.Children {
		s, err := jobs.GetSummary(projections.NewView(f.store), "default", "p")
		if err != nil || s.Children == nil {
			t.Fatalf("parent summary = %+v, %v", s, err)
		}
		return *s.Children
	}
	if c := children(); c != (jobs.Children{Pending: 1}) {
		t.Fatalf("children = %+v", c)
	}
	f.apply(&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{alloc("c1", "p/dispatch-1", "g")}})
	if c := children(); c != (jobs.Children{Running: 1}) {
		t.Fatalf("children = %+v", c)
	}
	f.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "c1", ClientStatus: events.AllocClientComplete}}})
	if c := children(); c != (jobs.Children{Dead: 1}) {
		t.Fatalf("children = %+v", c)
	}
	f.apply(&events.JobDeregistered{Namespace: "default", ID: "p/dispatch-1", Purge: true})
	if c := children(); c != (jobs.Children{}) {
		t.Fatalf("children after purge = %+v", c)
	}
	checkRebuild(t, f.store)
}

func checkRebuild(t *testing.T, store *kv.Store) {
	t.Helper()
	dst := pt.OpenStore(t)
	projs := []projections.Projection{jobs.Projection{}}
	if _, err := rebuild.Rebuild(store, dst, projs, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pt.Checksums(t, dst, projs), pt.Checksums(t, store, projs)) {
		t.Fatal("rebuilt jobs projection differs")
	}
}

func TestMetadata(t *testing.T) {
	p := jobs.Projection{}
	if p.Name() != "jobs" || p.Version() < 1 || len(p.Tables()) != 5 {
		t.Fatalf("%s v%d tables %v", p.Name(), p.Version(), p.Tables())
	}
	if k := jobs.VersionKey("ns", "id", 7); k != "ns\x00id\x0000000000000000000007" {
		t.Fatalf("VersionKey = %q", k)
	}
}
