package history_test

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/history"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

func alloc(id, node, ns, job string) events.Allocation {
	return events.Allocation{ID: id, Namespace: ns, EvalID: "e1", Name: job + ".web[0]", NodeID: node, JobID: job,
		TaskGroup: "web", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}
}

func jobReg(ns, id string, version uint64, count int) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Name: id, Namespace: ns, Type: events.JobTypeService, Priority: 50,
		Version: version, TaskGroups: []events.TaskGroup{{Name: "web", Count: count}}}}
}

// positions returns the entity's history as "index.seq" strings.
func positions(t *testing.T, r kv.Reader, kind, id string, reverse bool) []string {
	t.Helper()
	var out []string
	if err := history.Scan(projections.NewView(r), kind, id, reverse, func(p history.Pos) error {
		out = append(out, p.String())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIndexesEveryKey(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", jobReg("default", "web", 0, 2), jobReg("payments", "web", 0, 1)))
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2",
		&events.EvalsUpserted{Evals: []events.Evaluation{{ID: "e1", Namespace: "default", JobID: "web", Status: "pending"}}},
		// Two allocs on one node: the node's row is written once.
		&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{
			alloc("a1", "n1", "default", "web"), alloc("a2", "n1", "default", "web")}}))
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{
		{ID: "a1", ClientStatus: events.AllocClientRunning}}}))
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.AllocsDeleted{IDs: []string{"a2"}}))

	for _, tc := range []struct {
		kind, id string
		want     []string
	}{
		{events.KindAlloc, "a1", []string{"2.1", "3.0"}},
		{events.KindAlloc, "a2", []string{"2.1", "4.0"}}, // deleted, its history stays
		{events.KindNode, "n1", []string{"2.1", "3.0"}},
		{events.KindEval, "e1", []string{"2.0", "2.1"}},
		{events.KindJob, history.JobID("default", "web"), []string{"1.0", "2.0", "2.1"}},
		{events.KindJob, history.JobID("payments", "web"), []string{"1.1"}},
		{events.KindJob, "web", nil}, // a job's id is namespaced
		{events.KindNamespace, "default", []string{"1.0", "2.0", "2.1"}},
		{events.KindNamespace, "payments", []string{"1.1"}},
		{events.KindAlloc, "a", nil}, // ids are not prefixes of each other
	} {
		if got := positions(t, store, tc.kind, tc.id, false); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q: %v, want %v", tc.kind, tc.id, got, tc.want)
		}
		ok, err := history.Exists(projections.NewView(store), tc.kind, tc.id)
		if err != nil || ok != (len(tc.want) > 0) {
			t.Errorf("Exists(%s %q) = %v, %v", tc.kind, tc.id, ok, err)
		}
	}
	if got := positions(t, store, events.KindAlloc, "a1", true); !reflect.DeepEqual(got, []string{"3.0", "2.1"}) {
		t.Errorf("reverse a1: %v", got)
	}
	if pt.TableIndex(t, store, history.Table) != 4 {
		t.Errorf("table index %d, want 4", pt.TableIndex(t, store, history.Table))
	}
}

func TestMetadata(t *testing.T) {
	p := history.Projection{}
	if p.Name() != "history" || p.Version() != 1 || !reflect.DeepEqual(p.Tables(), []string{history.Table}) {
		t.Fatalf("%s v%d %v", p.Name(), p.Version(), p.Tables())
	}
	if !slices.ContainsFunc(all.Projections(), func(q projections.Projection) bool { return q.Name() == "history" }) {
		t.Fatal("projections/all does not maintain the history projection")
	}
	for _, k := range []string{events.KindAlloc, events.KindDeployment, events.KindEval, events.KindJob,
		events.KindNamespace, events.KindNode, events.KindServer} {
		if !history.KnownKind(k) {
			t.Errorf("kind %q is not known", k)
		}
	}
	if !slices.IsSorted(history.Kinds) {
		t.Errorf("Kinds %v are not sorted", history.Kinds)
	}
}

func TestPos(t *testing.T) {
	p := history.Pos{Index: 123, Seq: 4}
	q, err := history.ParsePos(p.String())
	if err != nil || q != p {
		t.Fatalf("ParsePos(%q) = %v, %v", p.String(), q, err)
	}
	for _, bad := range []string{"", "12", "a.1", "1.b", "1.99999999999", "-1.0", "1.-1"} {
		if _, err := history.ParsePos(bad); err == nil {
			t.Errorf("ParsePos(%q) accepted", bad)
		}
	}
	if !(history.Pos{Index: 1, Seq: 9}).Less(history.Pos{Index: 2}) || !(history.Pos{Index: 2}).Less(history.Pos{Index: 2, Seq: 1}) {
		t.Error("Less does not follow the log")
	}
}

// randomLogs returns n raft log entries of random events over a few
// namespaces, jobs, nodes, evals and allocs, with varying leader times.
func randomLogs(t testing.TB, rng *rand.Rand, n int) []raftlog.Log {
	t.Helper()
	pick := func(prefix string, k int) string { return fmt.Sprintf("%s%d", prefix, rng.Intn(k)) }
	logs := make([]raftlog.Log, 0, n)
	for i := 1; i <= n; i++ {
		var ps []events.Payload
		for range 1 + rng.Intn(3) {
			ns, job := pick("ns", 3), pick("job", 4)
			switch rng.Intn(8) {
			case 0:
				ps = append(ps, &events.NamespaceUpserted{Namespace: events.Namespace{Name: ns, Description: pick("d", 3)}})
			case 1:
				ps = append(ps, jobReg(ns, job, uint64(rng.Intn(5)), rng.Intn(4)))
			case 2:
				ps = append(ps, &events.EvalsUpserted{Evals: []events.Evaluation{{ID: pick("e", 10), Namespace: ns, JobID: job, Status: "pending"}}})
			case 3:
				ps = append(ps, &events.AllocsPlaced{EvalID: pick("e", 10), Allocs: []events.Allocation{
					alloc(pick("a", 20), pick("n", 5), ns, job), alloc(pick("a", 20), pick("n", 5), ns, job)}})
			case 4:
				ps = append(ps, &events.AllocsClientUpdated{NodeID: pick("n", 5), Updates: []events.AllocClientUpdate{
					{ID: pick("a", 20), ClientStatus: events.AllocClientRunning}}})
			case 5:
				ps = append(ps, &events.NodeStatusUpdated{ID: pick("n", 5), Status: events.NodeStatusDown})
			case 6:
				ps = append(ps, &events.JobDeregistered{Namespace: ns, ID: job, Purge: rng.Intn(2) == 0})
			default:
				ps = append(ps, &events.AllocsDeleted{IDs: []string{pick("a", 20)}})
			}
		}
		e := pt.Entry(t, fmt.Sprint("cmd-", i), ps...)
		e.Time = pt.LeaderTime + int64(i)*1e9
		logs = append(logs, pt.Log(t, uint64(i), e))
	}
	return logs
}

// TestRebuildEqualsLive applies a random workload in random raft batches,
// rebuilds every projection from the archive and compares checksums; the
// history rows must also equal a reference computed from the archive.
func TestRebuildEqualsLive(t *testing.T) {
	const seed = 5
	rng := rand.New(rand.NewSource(seed))
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live)
	logs := randomLogs(t, rng, 300)
	for len(logs) > 0 {
		n := min(len(logs), 1+rng.Intn(16))
		pt.Apply(t, f, logs[:n]...)
		logs = logs[n:]
	}
	rebuilt := pt.OpenStore(t)
	if _, err := rebuild.Rebuild(live, rebuilt, all.Projections(), 0, nil); err != nil {
		t.Fatal(err)
	}
	want := pt.Checksums(t, live, all.Projections())
	for name, sum := range pt.Checksums(t, rebuilt, all.Projections()) {
		if sum != want[name] {
			t.Errorf("seed %d: projection %s rebuilt with checksum %x, live %x", seed, name, sum, want[name])
		}
	}

	// The reference: every key of every archived event, job ids namespaced.
	ref := map[[2]string][]string{}
	for _, ev := range pt.Archived(t, live) {
		seen := map[[2]string]bool{}
		for _, k := range ev.Keys {
			id := k.Value
			if k.Kind == events.KindJob {
				id = history.JobID(ev.Key(events.KindNamespace), k.Value)
			}
			e := [2]string{k.Kind, id}
			if !seen[e] {
				seen[e] = true
				ref[e] = append(ref[e], history.Pos{Index: ev.Index, Seq: ev.Seq}.String())
			}
		}
	}
	if len(ref) < 20 {
		t.Fatalf("the workload touched only %d entities", len(ref))
	}
	rows := 0
	if err := projections.NewView(live).Scan(history.Table, "", false, func(string, projections.Row) error {
		rows++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for e, want := range ref {
		n += len(want)
		for _, store := range []kv.Reader{live, rebuilt} {
			if got := positions(t, store, e[0], e[1], false); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %q: %v, want %v", e[0], e[1], got, want)
			}
		}
	}
	if rows != n {
		t.Fatalf("%d rows, the reference has %d", rows, n)
	}
}

func TestTimelineNotFound(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", jobReg("default", "web", 0, 1)))
	_, err := history.Timeline(projections.NewView(store), history.Query{Kind: events.KindAlloc, ID: "nope"})
	if !errors.Is(err, history.ErrNoHistory) || !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("Timeline of an unknown alloc: %v", err)
	}
	// Bounds that select nothing are an empty page, not a 404.
	pg, err := history.Timeline(projections.NewView(store), history.Query{Kind: events.KindJob,
		ID: history.JobID("default", "web"), FromIndex: 2})
	if err != nil || len(pg.Events) != 0 || pg.Next != (history.Pos{}) {
		t.Fatalf("empty window: %+v, %v", pg, err)
	}
}
