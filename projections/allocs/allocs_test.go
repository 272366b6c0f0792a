package allocs_test

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/order"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/raftlog"
)

func alloc(id, node, job, eval string) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", EvalID: eval, Name: job + ".web[0]", NodeID: node,
		JobID: job, TaskGroup: "web", Resources: events.Resources{CPU: 100, MemoryMB: 64},
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending, CreateTime: pt.LeaderTime}
}

func get(t *testing.T, v projections.View, id string) *allocs.Alloc {
	t.Helper()
	a, err := allocs.Get(v, id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return a
}

func ids(list []*allocs.Alloc) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.ID
	}
	return out
}

func TestProjection(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, allocs.Projection{})
	v := projections.NewView(store)
	yes := true

	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{
		alloc("b", "n1", "web", "e1"), alloc("a", "n2", "web", "e1")}}))
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.AllocsPlaced{EvalID: "e2", Allocs: []events.Allocation{
		alloc("c", "n1", "api", "e2")}}))
	if a := get(t, v, "a"); a.CreateIndex != 1 || a.ModifyIndex != 1 || a.NodeID != "n2" {
		t.Fatalf("a = %+v", a)
	}
	for _, tc := range []struct {
		name string
		got  func() ([]*allocs.Alloc, error)
		want []string
	}{
		{"by node n1", func() ([]*allocs.Alloc, error) { return allocs.ByNode(v, "n1") }, []string{"b", "c"}},
		{"by job web", func() ([]*allocs.Alloc, error) { return allocs.ByJob(v, "default", "web") }, []string{"a", "b"}},
		{"by eval e2", func() ([]*allocs.Alloc, error) { return allocs.ByEval(v, "e2") }, []string{"c"}},
		{"by job in another namespace", func() ([]*allocs.Alloc, error) { return allocs.ByJob(v, "other", "web") }, []string{}},
	} {
		list, err := tc.got()
		if err != nil || !reflect.DeepEqual(ids(list), tc.want) {
			t.Errorf("%s = %v, %v; want %v", tc.name, ids(list), err, tc.want)
		}
	}

	// The server stops b without a shutdown delay (N23): the transition is
	// merged, the rest kept.
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.AllocsDesiredUpdated{EvalID: "e3", Updates: []events.AllocDesiredUpdate{
		{ID: "b", DesiredStatus: events.AllocDesiredStop, DesiredDescription: "alloc stopped by user",
			DesiredTransition: events.DesiredTransition{NoShutdownDelay: &yes}},
		{ID: "missing", DesiredStatus: events.AllocDesiredStop}}}))
	b := get(t, v, "b")
	if b.DesiredStatus != events.AllocDesiredStop || b.DesiredTransition.NoShutdownDelay == nil || !*b.DesiredTransition.NoShutdownDelay ||
		b.ClientStatus != events.AllocClientPending || b.ModifyIndex != 3 || b.ModifyTime != pt.LeaderTime {
		t.Fatalf("stopped b = %+v", b)
	}
	if _, err := allocs.Get(v, "missing"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("a desired update of an unknown alloc created it: %v", err)
	}

	// A client update applies only to its own node's allocs.
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{
		{ID: "c", ClientStatus: events.AllocClientRunning, TaskStates: map[string]*events.TaskState{"t": {State: "running"}}},
		{ID: "a", ClientStatus: events.AllocClientFailed}}}))
	if c := get(t, v, "c"); c.ClientStatus != events.AllocClientRunning || c.TaskStates["t"].State != "running" || c.ModifyIndex != 4 {
		t.Fatalf("c = %+v", c)
	}
	if a := get(t, v, "a"); a.ClientStatus != events.AllocClientPending || a.ModifyIndex != 1 {
		t.Fatalf("n1's update changed a, on n2: %+v", a)
	}

	// A replacement links its previous alloc.
	repl := alloc("d", "n2", "web", "e4")
	repl.PreviousAllocation = "b"
	pt.ApplyOne(t, f, 5, pt.Entry(t, "c5", &events.AllocsPlaced{EvalID: "e4", Allocs: []events.Allocation{repl}}))
	if b := get(t, v, "b"); b.NextAllocation != "d" || b.ModifyIndex != 5 {
		t.Fatalf("previous alloc b = %+v", b)
	}

	// Re-placing an alloc on another node moves its index rows.
	moved := alloc("a", "n3", "web", "e1")
	pt.ApplyOne(t, f, 6, pt.Entry(t, "c6", &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{moved}}))
	if a := get(t, v, "a"); a.CreateIndex != 1 || a.NodeID != "n3" {
		t.Fatalf("moved a = %+v", a)
	}
	if l, _ := allocs.ByNode(v, "n2"); !reflect.DeepEqual(ids(l), []string{"d"}) {
		t.Fatalf("n2 after the move: %v", ids(l))
	}
	pt.ApplyOne(t, f, 7, pt.Entry(t, "c7", &events.AllocsDeleted{IDs: []string{"c", "zz"}}))
	checkIndexes(t, v)

	for _, rev := range []bool{false, true} {
		var got []string
		if err := allocs.Scan(v, allocs.Query{Reverse: rev}, func(a *allocs.Alloc) error {
			got = append(got, a.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := []string{"a", "b", "d"}
		if rev {
			want = []string{"d", "b", "a"}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Scan(reverse=%v) = %v, want %v", rev, got, want)
		}
	}
	// A page starts at its token's key, either way.
	var got []string
	_ = allocs.Scan(v, allocs.Query{From: order.Key(5, "d"), Reverse: true}, func(a *allocs.Alloc) error {
		got = append(got, a.ID)
		return nil
	})
	if !reflect.DeepEqual(got, []string{"d", "b", "a"}) {
		t.Fatalf("Scan(from d, reverse) = %v", got)
	}
	got = nil
	_ = allocs.Scan(v, allocs.Query{From: order.Key(1, "b")}, func(a *allocs.Alloc) error {
		got = append(got, a.ID)
		return nil
	})
	if !reflect.DeepEqual(got, []string{"b", "d"}) {
		t.Fatalf("Scan(from b) = %v", got)
	}

	for _, tc := range []struct{ in, want, err string }{
		{"a", "a", ""}, {"d", "d", ""}, {"x", "", "not found"},
	} {
		a, err := allocs.Resolve(v, tc.in)
		if tc.err != "" {
			if !errors.Is(err, projections.ErrNotFound) {
				t.Errorf("Resolve(%q) = %v, %v", tc.in, a, err)
			}
			continue
		}
		if err != nil || a.ID != tc.want {
			t.Errorf("Resolve(%q) = %v, %v", tc.in, a, err)
		}
	}
	pt.CheckRebuildEqualsLive(t, store, allocs.Projection{})
}

func TestResolveAmbiguous(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, allocs.Projection{})
	v := projections.NewView(store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.AllocsPlaced{Allocs: []events.Allocation{
		alloc("ab1", "n", "j", "e"), alloc("ab2", "n", "j", "e")}}))
	var amb *projections.AmbiguousError
	if _, err := allocs.Resolve(v, "ab"); !errors.As(err, &amb) || !reflect.DeepEqual(amb.Matches, []string{"ab1", "ab2"}) {
		t.Fatalf("Resolve(ab) = %v", err)
	}
	var got []string
	if err := allocs.Scan(v, allocs.Query{Prefix: "ab", Reverse: true}, func(a *allocs.Alloc) error {
		got = append(got, a.ID)
		return nil
	}); err != nil || !reflect.DeepEqual(got, []string{"ab2", "ab1"}) {
		t.Fatalf("Scan(prefix ab, reverse) = %v, %v", got, err)
	}
}

// checkIndexes checks every index table holds exactly the rows the allocs
// imply.
func checkIndexes(t *testing.T, v projections.View) {
	t.Helper()
	want := map[string][]string{}
	err := v.Scan(allocs.Table, "", false, func(id string, r projections.Row) error {
		a, err := allocs.Get(v, id)
		if err != nil {
			return err
		}
		want[allocs.ByNodeTable] = append(want[allocs.ByNodeTable], allocs.NodeKey(a.NodeID)+id)
		want[allocs.ByJobTable] = append(want[allocs.ByJobTable], allocs.JobKey(a.Namespace, a.JobID)+id)
		want[allocs.ByEvalTable] = append(want[allocs.ByEvalTable], allocs.EvalKey(a.EvalID)+id)
		want[allocs.ByCreateTable] = append(want[allocs.ByCreateTable], order.Key(r.CreateIndex, id))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{allocs.ByNodeTable, allocs.ByJobTable, allocs.ByEvalTable, allocs.ByCreateTable} {
		got := pt.Keys(t, v, table)
		w := want[table]
		sort.Strings(w)
		if len(got) != len(w) || (len(w) > 0 && !reflect.DeepEqual(got, w)) {
			t.Fatalf("index %s = %q\nwant %q", table, got, w)
		}
	}
}

func TestRebuildEqualsLive(t *testing.T) {
	const seed = 20261201
	rng := rand.New(rand.NewSource(seed))
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live, allocs.Projection{})
	logs := randomLogs(t, rng, 300)
	for len(logs) > 0 {
		n := min(len(logs), 1+rng.Intn(8))
		pt.Apply(t, f, logs[:n]...)
		logs = logs[n:]
	}
	v := projections.NewView(live)
	checkIndexes(t, v)
	var n int
	if err := allocs.Scan(v, allocs.Query{}, func(*allocs.Alloc) error { n++; return nil }); err != nil || n < 5 {
		t.Fatalf("seed %d: the workload left %d allocs (%v); it should leave several", seed, n, err)
	}
	pt.CheckRebuildEqualsLive(t, live, allocs.Projection{})
}

// randomLogs is a workload of placements (some replacing, some moving an
// alloc), desired and client updates (some of unknown allocs or from the
// wrong node) and deletes.
func randomLogs(t *testing.T, rng *rand.Rand, n int) []raftlog.Log {
	t.Helper()
	id := func() string { return fmt.Sprintf("a%02d", rng.Intn(30)) }
	node := func() string { return fmt.Sprintf("n%d", rng.Intn(4)) }
	yes := true
	var logs []raftlog.Log
	for i := 1; i <= n; i++ {
		var ps []events.Payload
		for range 1 + rng.Intn(3) {
			switch r := rng.Intn(10); {
			case r < 4:
				var as []events.Allocation
				for range 1 + rng.Intn(3) {
					a := alloc(id(), node(), fmt.Sprint("job", rng.Intn(3)), fmt.Sprint("e", rng.Intn(5)))
					if rng.Intn(3) == 0 {
						a.PreviousAllocation = id()
					}
					as = append(as, a)
				}
				ps = append(ps, &events.AllocsPlaced{EvalID: as[0].EvalID, Allocs: as})
			case r < 6:
				ps = append(ps, &events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{{ID: id(),
					DesiredStatus: events.AllocDesiredStop, DesiredTransition: events.DesiredTransition{NoShutdownDelay: &yes}}}})
			case r < 8:
				ps = append(ps, &events.AllocsClientUpdated{NodeID: node(), Updates: []events.AllocClientUpdate{{ID: id(),
					ClientStatus: events.AllocClientRunning, TaskStates: map[string]*events.TaskState{
						"a": {State: "running"}, "b": {State: "pending", Restarts: rng.Intn(3)}}}}})
			default:
				ps = append(ps, &events.AllocsDeleted{IDs: []string{id(), id()}})
			}
		}
		e := pt.Entry(t, fmt.Sprint("cmd-", i), ps...)
		e.Time = pt.LeaderTime + int64(i)*1e6
		logs = append(logs, pt.Log(t, uint64(i), e))
	}
	return logs
}
