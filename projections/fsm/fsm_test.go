package fsm_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

var (
	upsert, deleteNS, register = pt.Upsert, pt.DeleteNS, pt.Register
	randomLogs, applyInBatches = pt.RandomLogs, pt.ApplyInBatches
	closed                     = pt.Closed
	rebuildFrom                = pt.Rebuilt
)

func getNS(t testing.TB, r kv.Reader, name string) (*namespaces.Namespace, bool) {
	t.Helper()
	ns, err := namespaces.Get(projections.NewView(r), name)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return ns, true
}

func TestApplyArchivesAndStamps(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	e := pt.Entry(t, "cmd-1", upsert("web"), register("s1"))
	e.Time = 1234
	e.Actor = "alice"
	res := pt.ApplyOne(t, f, 5, e)
	if !reflect.DeepEqual(res, fsm.Result{Index: 5, Time: 1234}) {
		t.Fatalf("result %+v", res)
	}
	if f.Applied() != 5 || pt.AppliedIndex(t, store) != 5 {
		t.Fatalf("applied %d, stored %d; want 5", f.Applied(), pt.AppliedIndex(t, store))
	}
	if idx, _ := f.Notifier().Applied(); idx != 5 {
		t.Fatalf("notifier at %d", idx)
	}
	got := pt.Archived(t, store)
	if len(got) != 2 || pt.ArchiveLen(t, store) != 2 {
		t.Fatalf("archived %d events, Len %d; want 2", len(got), pt.ArchiveLen(t, store))
	}
	for i, ev := range got {
		want := e.Events[i]
		want.Index, want.Seq, want.Time, want.Actor, want.CorrelationID = 5, uint32(i), 1234, "alice", "cmd-1"
		if !reflect.DeepEqual(*ev, want) {
			t.Errorf("archived event %d:\n got %+v\nwant %+v", i, *ev, want)
		}
	}
	ns, ok := getNS(t, store, "web")
	if !ok || ns.Description != "ns web" || ns.CreateIndex != 5 || ns.ModifyIndex != 5 {
		t.Fatalf("namespace %+v", ns)
	}
	srv, err := servers.Get(projections.NewView(store), "s1")
	if err != nil || *srv != *register("s1") {
		t.Fatalf("server %+v, %v", srv, err)
	}
}

func TestPreconditions(t *testing.T) {
	exists := func(table, key string) events.Precondition {
		return events.Precondition{Table: table, Key: key, Op: events.Exists}
	}
	absent := func(table, key string) events.Precondition {
		return events.Precondition{Table: table, Key: key, Op: events.Absent}
	}
	modIdx := func(key string, i uint64) events.Precondition {
		return events.Precondition{Table: namespaces.Table, Key: key, Op: events.ModifyIndex, Index: i}
	}
	const ns = namespaces.Table
	for _, tc := range []struct {
		name string
		pre  []events.Precondition
		fail int // index of the failing precondition, -1 when all hold
	}{
		{"none", nil, -1},
		{"exists holds", []events.Precondition{exists(ns, "a")}, -1},
		{"exists fails", []events.Precondition{exists(ns, "missing")}, 0},
		{"exists in another table", []events.Precondition{exists(servers.Table, "a")}, 0},
		{"absent holds", []events.Precondition{absent(ns, "missing")}, -1},
		{"absent fails", []events.Precondition{absent(ns, "a")}, 0},
		{"modify index holds", []events.Precondition{modIdx("a", 1)}, -1},
		{"modify index stale", []events.Precondition{modIdx("a", 2)}, 0},
		{"modify index 0 of absent holds", []events.Precondition{modIdx("missing", 0)}, -1},
		{"modify index 0 of present fails", []events.Precondition{modIdx("a", 0)}, 0},
		{"modify index of absent fails", []events.Precondition{modIdx("missing", 1)}, 0},
		// An unknown op is a newer ordo's: it halts the FSM rather than
		// being rejected (TestUnknownEventHaltsApply).
		{"all hold", []events.Precondition{exists(ns, "a"), absent(ns, "b"), modIdx("a", 1)}, -1},
		{"second fails", []events.Precondition{exists(ns, "a"), absent(ns, "a"), exists(ns, "missing")}, 1},
		// Preconditions see the state before the entry, not its own events.
		{"not its own events", []events.Precondition{exists(ns, "b")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := pt.OpenStore(t)
			f := pt.NewFSM(t, store)
			pt.ApplyOne(t, f, 1, pt.Entry(t, "setup", upsert("a")))
			before := pt.Checksums(t, store, []projections.Projection{namespaces.Projection{}})
			nsWatch := f.Notifier().Table(ns)
			_, appliedCh := f.Notifier().Applied()

			e := pt.Entry(t, "cmd", upsert("b"))
			e.Preconditions = tc.pre
			res := pt.ApplyOne(t, f, 2, e)

			if res.Index != 2 || res.Duplicate {
				t.Fatalf("result %+v, want index 2, not a duplicate", res)
			}
			// The applied index advances either way, and readers are woken.
			if f.Applied() != 2 || pt.AppliedIndex(t, store) != 2 || !closed(appliedCh) {
				t.Fatalf("applied %d (stored %d), applied channel closed %v", f.Applied(), pt.AppliedIndex(t, store), closed(appliedCh))
			}
			if tc.fail < 0 {
				if res.Err != nil {
					t.Fatalf("rejected: %v", res.Err)
				}
				if _, ok := getNS(t, store, "b"); !ok {
					t.Fatal("event not applied")
				}
				if pt.ArchiveLen(t, store) != 2 || pt.TableIndex(t, store, ns) != 2 || !closed(nsWatch) {
					t.Fatalf("archive %d, table index %d, watcher woken %v", pt.ArchiveLen(t, store), pt.TableIndex(t, store, ns), closed(nsWatch))
				}
				return
			}
			var rej *fsm.RejectedError
			if !errors.As(res.Err, &rej) {
				t.Fatalf("Err = %v (%T), want *RejectedError", res.Err, res.Err)
			}
			if rej.Precondition != tc.pre[tc.fail] || rej.Reason == "" {
				t.Fatalf("rejected on %+v (%q), want %+v", rej.Precondition, rej.Reason, tc.pre[tc.fail])
			}
			if _, ok := getNS(t, store, "b"); ok {
				t.Fatal("a rejected entry's event was applied")
			}
			if n := pt.ArchiveLen(t, store); n != 1 || len(pt.Archived(t, store)) != 1 {
				t.Fatalf("archive holds %d events after a rejection, want 1", n)
			}
			if idx := pt.TableIndex(t, store, ns); idx != 1 {
				t.Fatalf("table index %d after a rejection, want 1", idx)
			}
			if closed(nsWatch) {
				t.Fatal("a rejection woke the table's watchers")
			}
			if after := pt.Checksums(t, store, []projections.Projection{namespaces.Projection{}}); !reflect.DeepEqual(after, before) {
				t.Fatal("a rejection changed the namespaces projection")
			}

			// The rejection is recorded under the command id: a retry gets it
			// back and appends nothing.
			cr, ok, err := fsm.CommandResult(projections.NewView(store), "cmd", "")
			if err != nil || !ok || cr.Index != 2 || !cr.Duplicate || !errors.As(cr.Err, &rej) {
				t.Fatalf("CommandResult = %+v, %v, %v", cr, ok, err)
			}
			retry := pt.ApplyOne(t, f, 3, e)
			if retry.Index != 2 || !retry.Duplicate || !errors.As(retry.Err, &rej) {
				t.Fatalf("retry of a rejected command = %+v", retry)
			}
			if pt.ArchiveLen(t, store) != 1 {
				t.Fatal("retry of a rejected command appended events")
			}
		})
	}
}

func TestMalformedEntryIsRejected(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	res := pt.Apply(t, f, raftlog.Log{Index: 1, Data: []byte{0xc1, 0x00}})[0]
	var rej *fsm.RejectedError
	if res.Index != 1 || !errors.As(res.Err, &rej) {
		t.Fatalf("result %+v", res)
	}
	if f.Applied() != 1 || pt.ArchiveLen(t, store) != 0 {
		t.Fatalf("applied %d, archive %d", f.Applied(), pt.ArchiveLen(t, store))
	}
	// The next entry applies normally.
	if res := pt.ApplyOne(t, f, 2, pt.Entry(t, "c", upsert("a"))); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestDuplicateCommandID(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "cmd-1", upsert("a")))
	tableIdx := pt.TableIndex(t, store, namespaces.Table)
	watch := f.Notifier().Table(namespaces.Table)

	// A retry (possibly re-decided, so with other events) of cmd-1.
	res := pt.ApplyOne(t, f, 2, pt.Entry(t, "cmd-1", upsert("b")))
	if !reflect.DeepEqual(res, fsm.Result{Index: 1, Duplicate: true}) {
		t.Fatalf("duplicate = %+v, want index 1, Duplicate", res)
	}
	if pt.ArchiveLen(t, store) != 1 {
		t.Fatal("a duplicate appended events")
	}
	if _, ok := getNS(t, store, "b"); ok {
		t.Fatal("a duplicate's events were applied")
	}
	if pt.TableIndex(t, store, namespaces.Table) != tableIdx || closed(watch) {
		t.Fatal("a duplicate moved the table index or woke watchers")
	}
	if f.Applied() != 2 {
		t.Fatalf("applied %d after a duplicate at 2", f.Applied())
	}

	// Within one raft batch, the second use of an id is a duplicate of the first.
	rs := pt.Apply(t, f,
		pt.Log(t, 3, pt.Entry(t, "cmd-2", upsert("c"))),
		pt.Log(t, 4, pt.Entry(t, "cmd-2", upsert("d"))),
		pt.Log(t, 5, pt.Entry(t, "cmd-3", upsert("e"))))
	want := []fsm.Result{{Index: 3, Time: pt.LeaderTime}, {Index: 3, Duplicate: true}, {Index: 5, Time: pt.LeaderTime}}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("results %+v, want %+v", rs, want)
	}
	if _, ok := getNS(t, store, "d"); ok {
		t.Fatal("an in-batch duplicate's events were applied")
	}
	if pt.ArchiveLen(t, store) != 3 {
		t.Fatalf("archive %d, want 3", pt.ArchiveLen(t, store))
	}

	// An entry without a command id is never a duplicate.
	for i := uint64(6); i <= 7; i++ {
		if res := pt.ApplyOne(t, f, i, pt.Entry(t, "", upsert("anon"))); res.Duplicate {
			t.Fatalf("entry %d without a command id reported duplicate", i)
		}
	}
	if pt.ArchiveLen(t, store) != 5 {
		t.Fatalf("archive %d, want 5", pt.ArchiveLen(t, store))
	}
}

func TestSkipsAppliedEntries(t *testing.T) {
	dir := t.TempDir()
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	f := pt.NewFSM(t, store)
	pt.Apply(t, f,
		pt.Log(t, 1, pt.Entry(t, "c1", upsert("a"))),
		pt.Log(t, 2, pt.Entry(t, "c2", upsert("b"))),
		pt.Log(t, 3, pt.Entry(t, "c3", upsert("c"))))
	sums := pt.Checksums(t, store, []projections.Projection{namespaces.Projection{}})

	// Raft replays entries the state already holds (after a restart, or a
	// snapshot restore that was skipped): they change nothing.
	check := func(f *fsm.FSM, store *kv.Store) {
		t.Helper()
		rs := pt.Apply(t, f,
			pt.Log(t, 2, pt.Entry(t, "other-2", deleteNS("a"))),
			pt.Log(t, 3, pt.Entry(t, "other-3", upsert("x"))))
		want := []fsm.Result{{Index: 2, Duplicate: true}, {Index: 3, Duplicate: true}}
		if !reflect.DeepEqual(rs, want) {
			t.Fatalf("replayed entries: %+v, want %+v", rs, want)
		}
		if f.Applied() != 3 || pt.ArchiveLen(t, store) != 3 {
			t.Fatalf("applied %d, archive %d", f.Applied(), pt.ArchiveLen(t, store))
		}
		if got := pt.Checksums(t, store, []projections.Projection{namespaces.Projection{}}); !reflect.DeepEqual(got, sums) {
			t.Fatal("replayed entries changed the projections")
		}
	}
	check(f, store)

	f.Close()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	store, err = kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f = pt.NewFSM(t, store)
	if f.Applied() != 3 {
		t.Fatalf("reopened FSM resumes at %d, want 3", f.Applied())
	}
	check(f, store)

	// An index that does not increase within one batch is skipped too.
	rs := pt.Apply(t, f,
		pt.Log(t, 5, pt.Entry(t, "c5", upsert("e"))),
		pt.Log(t, 4, pt.Entry(t, "c4", upsert("d"))))
	if !rs[1].Duplicate || rs[0].Duplicate {
		t.Fatalf("results %+v", rs)
	}
	if _, ok := getNS(t, store, "d"); ok {
		t.Fatal("an entry below the batch's applied index was applied")
	}
}

func TestTableIndexMovesOnlyOnChange(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	ti := func() (uint64, uint64) {
		return pt.TableIndex(t, store, namespaces.Table), pt.TableIndex(t, store, servers.Table)
	}
	step := func(index uint64, p events.Payload, wantNS, wantSrv uint64) {
		t.Helper()
		nsWatch, srvWatch := f.Notifier().Table(namespaces.Table), f.Notifier().Table(servers.Table)
		if res := pt.ApplyOne(t, f, index, pt.Entry(t, fmt.Sprint("c", index), p)); res.Err != nil {
			t.Fatal(res.Err)
		}
		if ns, srv := ti(); ns != wantNS || srv != wantSrv {
			t.Fatalf("after %T at %d: table indexes namespaces=%d servers=%d, want %d and %d", p, index, ns, srv, wantNS, wantSrv)
		}
		// Watchers wake exactly when their table's index moved.
		if closed(nsWatch) != (wantNS == index) || closed(srvWatch) != (wantSrv == index) {
			t.Fatalf("after %T at %d: namespaces watcher woken %v, servers watcher woken %v", p, index, closed(nsWatch), closed(srvWatch))
		}
	}
	step(1, upsert("a"), 1, 0)
	step(2, register("s1"), 1, 2)
	// N15: deleting a namespace that does not exist changes nothing, though
	// the event is archived.
	step(3, deleteNS("missing"), 1, 2)
	if pt.ArchiveLen(t, store) != 3 {
		t.Fatalf("archive %d, want 3", pt.ArchiveLen(t, store))
	}
	step(4, &events.ServerRemoved{ID: "nobody"}, 1, 2)
	step(5, deleteNS("a"), 5, 2)
	step(6, deleteNS("a"), 5, 2)
	// Rewriting a row with the same content is a write: its modify index moves.
	step(7, upsert("b"), 7, 2)
	step(8, upsert("b"), 8, 2)
	if ns, _ := getNS(t, store, "b"); ns.CreateIndex != 7 || ns.ModifyIndex != 8 {
		t.Fatalf("namespace b %+v", ns)
	}
}

func TestMultiEventEntry(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("keep")))
	// Later events in an entry see the earlier ones.
	res := pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", upsert("tmp"), deleteNS("tmp"), upsert("keep"), deleteNS("never")))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if _, ok := getNS(t, store, "tmp"); ok {
		t.Fatal("tmp survived its deletion in the same entry")
	}
	if ns, _ := getNS(t, store, "keep"); ns.CreateIndex != 1 || ns.ModifyIndex != 2 {
		t.Fatalf("keep = %+v", ns)
	}
	if pt.ArchiveLen(t, store) != 5 || pt.TableIndex(t, store, namespaces.Table) != 2 {
		t.Fatalf("archive %d, table index %d", pt.ArchiveLen(t, store), pt.TableIndex(t, store, namespaces.Table))
	}
}

func TestBatchedApplyEqualsOneByOne(t *testing.T) {
	var entries []*events.Entry
	for i := range 40 {
		name := fmt.Sprint("ns", i%7)
		var p events.Payload = upsert(name)
		if i%3 == 2 {
			p = deleteNS(name)
		}
		e := pt.Entry(t, fmt.Sprint("c", i%37), p) // some duplicate ids
		if i%5 == 4 {
			e.Preconditions = []events.Precondition{{Table: namespaces.Table, Key: name, Op: events.Exists}}
		}
		entries = append(entries, e)
	}
	one, batched := pt.OpenStore(t), pt.OpenStore(t)
	f1, fb := pt.NewFSM(t, one), pt.NewFSM(t, batched)
	var logs []raftlog.Log
	var want []fsm.Result
	for i, e := range entries {
		l := pt.Log(t, uint64(i+1), e)
		want = append(want, pt.Apply(t, f1, l)...)
		logs = append(logs, l)
	}
	var rejected, dups int
	for _, r := range want {
		if r.Err != nil {
			rejected++
		}
		if r.Duplicate {
			dups++
		}
	}
	if rejected == 0 || dups == 0 {
		t.Fatalf("workload has %d rejections and %d duplicates; want some of each", rejected, dups)
	}
	got := pt.Apply(t, fb, logs...)
	if resultsString(got) != resultsString(want) {
		t.Fatalf("batched results %s\nwant %s", resultsString(got), resultsString(want))
	}
	if a, b := pt.Checksums(t, one, allProjs()), pt.Checksums(t, batched, allProjs()); !reflect.DeepEqual(a, b) {
		t.Fatal("batched and one-by-one apply disagree")
	}
	if !reflect.DeepEqual(pt.Archived(t, one), pt.Archived(t, batched)) || pt.ArchiveLen(t, one) != pt.ArchiveLen(t, batched) {
		t.Fatal("archives differ")
	}
}

func TestCommandResultUnknown(t *testing.T) {
	store := pt.OpenStore(t)
	pt.NewFSM(t, store)
	if _, ok, err := fsm.CommandResult(projections.NewView(store), "never", ""); ok || err != nil {
		t.Fatalf("CommandResult of an unknown id: %v, %v", ok, err)
	}
}

func TestNewFSMNeedsProjections(t *testing.T) {
	if _, err := fsm.New(pt.OpenStore(t), fsm.Config{}); err == nil {
		t.Fatal("NewFSM without projections succeeded")
	}
}

// resultsString renders results with their errors' text.
func resultsString(rs []fsm.Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "{%d %v %v} ", r.Index, r.Duplicate, r.Err)
	}
	return b.String()
}

// Ids the server mints are unique by construction: the FSM neither records
// nor dedupes them, so only client idempotency keys cost a lookup.
func TestMintedCommandIDsAreNotDeduped(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	e1 := pt.Entry(t, "minted", upsert("a"))
	e1.Idempotent = false
	e2 := pt.Entry(t, "minted", upsert("b"))
	e2.Idempotent = false
	pt.ApplyOne(t, f, 1, e1)
	if res := pt.ApplyOne(t, f, 2, e2); res.Duplicate || res.Index != 2 {
		t.Fatalf("second entry with a minted id = %+v, want applied at 2", res)
	}
	if _, ok := getNS(t, store, "b"); !ok {
		t.Fatal("second entry's events were not applied")
	}
	if _, ok, err := fsm.CommandResult(projections.NewView(store), "minted", ""); err != nil || ok {
		t.Fatalf("minted id recorded: ok=%v err=%v", ok, err)
	}
}

// Two different requests racing with one idempotency key: the second is
// refused at apply with a recorded reason, never answered as the first.
func TestReusedKeyWithAnotherRequestIsRejected(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	e1 := pt.Entry(t, "k", upsert("a"))
	e1.RequestHash = "hash-a"
	e2 := pt.Entry(t, "k", upsert("b"))
	e2.RequestHash = "hash-b"
	pt.ApplyOne(t, f, 1, e1)
	res := pt.ApplyOne(t, f, 2, e2)
	var re *fsm.RejectedError
	if !errors.As(res.Err, &re) || res.Duplicate {
		t.Fatalf("reused key = %+v, want a rejection", res)
	}
	if pt.ArchiveLen(t, store) != 1 {
		t.Fatal("the second request's events were archived")
	}
	// A true retry of the first request still gets the first answer.
	e3 := pt.Entry(t, "k", upsert("a"))
	e3.RequestHash = "hash-a"
	if res := pt.ApplyOne(t, f, 3, e3); !res.Duplicate || res.Index != 1 {
		t.Fatalf("retry = %+v, want duplicate of 1", res)
	}
}
