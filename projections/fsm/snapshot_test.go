package fsm_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/kv"
)

func allProjs() []projections.Projection { return all.Projections() }

func persist(t testing.TB, f *fsm.FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var buf bytes.Buffer
	if err := snap.Persist(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// populate applies a few entries of every kind at indexes from..from+4.
func populate(t testing.TB, f *fsm.FSM, from uint64) {
	t.Helper()
	pt.Apply(t, f,
		pt.Log(t, from, pt.Entry(t, "p1", upsert("a"), upsert("b"))),
		pt.Log(t, from+1, pt.Entry(t, "p2", register("s1"), register("s2"))),
		pt.Log(t, from+2, pt.Entry(t, "p3", deleteNS("a"))),
		pt.Log(t, from+3, pt.Entry(t, "p1", upsert("dup"))))
	e := pt.Entry(t, "p5", upsert("rejected"))
	e.Preconditions = rejectAlways
	pt.ApplyOne(t, f, from+4, e)
}

var rejectAlways = []events.Precondition{{Table: namespaces.Table, Key: "nobody", Op: events.Exists}}

func TestSnapshotRestore(t *testing.T) {
	src := pt.OpenStore(t)
	fs := pt.NewFSM(t, src)
	populate(t, fs, 1)
	data := persist(t, fs)

	// The destination is behind, with state of its own that the snapshot
	// replaces entirely.
	dst := pt.OpenStore(t)
	fd := pt.NewFSM(t, dst)
	pt.ApplyOne(t, fd, 1, pt.Entry(t, "stale-cmd", upsert("stale"), register("stale")))
	watch := fd.Notifier().Table(namespaces.Table)
	if err := fd.Restore(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if _, ok := getNS(t, dst, "stale"); ok {
		t.Fatal("restore kept a namespace the snapshot does not have")
	}
	if _, ok, _ := fsm.CommandResult(projections.NewView(dst), "stale-cmd", ""); ok {
		t.Fatal("restore kept a command record the snapshot does not have")
	}
	if fd.Applied() != fs.Applied() || fd.Applied() != 5 {
		t.Fatalf("restored FSM at %d, source at %d", fd.Applied(), fs.Applied())
	}
	if idx, _ := fd.Notifier().Applied(); idx != 5 || !closed(watch) {
		t.Fatalf("notifier at %d after restore, table watchers woken %v", idx, closed(watch))
	}
	sameState(t, src, dst)

	// Both continue identically, command ids included.
	for _, f := range []*fsm.FSM{fs, fd} {
		rs := pt.Apply(t, f,
			pt.Log(t, 6, pt.Entry(t, "p2", upsert("dup-of-p2"))),
			pt.Log(t, 7, pt.Entry(t, "p7", upsert("c"), &events.ServerRemoved{ID: "s1"})))
		if !rs[0].Duplicate || rs[0].Index != 2 || rs[1].Err != nil {
			t.Fatalf("after restore: %+v", rs)
		}
	}
	sameState(t, src, dst)
}

// sameState fails unless a and b hold equal projections and archives.
func sameState(t testing.TB, a, b kv.Reader) {
	t.Helper()
	if ca, cb := pt.Checksums(t, a, allProjs()), pt.Checksums(t, b, allProjs()); !reflect.DeepEqual(ca, cb) {
		t.Fatal("projection checksums differ")
	}
	if !reflect.DeepEqual(pt.Archived(t, a), pt.Archived(t, b)) || pt.ArchiveLen(t, a) != pt.ArchiveLen(t, b) {
		t.Fatal("archives differ")
	}
	if pt.AppliedIndex(t, a) != pt.AppliedIndex(t, b) {
		t.Fatalf("applied %d vs %d", pt.AppliedIndex(t, a), pt.AppliedIndex(t, b))
	}
}

func TestSnapshotIsTakenAtItsIndex(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("before")))
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	// Raft persists a snapshot while the FSM goes on applying.
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", upsert("after")))
	var buf bytes.Buffer
	if err := snap.Persist(&buf); err != nil {
		t.Fatal(err)
	}

	dst := pt.OpenStore(t)
	fd := pt.NewFSM(t, dst)
	if err := fd.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	if fd.Applied() != 1 {
		t.Fatalf("restored at %d, want 1", fd.Applied())
	}
	if _, ok := getNS(t, dst, "after"); ok {
		t.Fatal("snapshot holds a write made after it was taken")
	}
	if _, ok := getNS(t, dst, "before"); !ok {
		t.Fatal("snapshot lost a write made before it was taken")
	}
	if pt.ArchiveLen(t, dst) != 1 {
		t.Fatalf("restored archive Len %d, want 1", pt.ArchiveLen(t, dst))
	}
	// The restored FSM applies the entry the snapshot lacked.
	pt.ApplyOne(t, fd, 2, pt.Entry(t, "c2", upsert("after")))
	sameState(t, store, dst)
}

func TestRestoreSkipsOlderSnapshot(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("a")))
	old := persist(t, f)
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", upsert("b")))
	same := persist(t, f)
	sums := pt.Checksums(t, store, allProjs())

	for name, data := range map[string][]byte{"older": old, "same index": same} {
		watch := f.Notifier().Table(namespaces.Table)
		if err := f.Restore(bytes.NewReader(data)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Applied() != 2 || !reflect.DeepEqual(pt.Checksums(t, store, allProjs()), sums) {
			t.Fatalf("%s snapshot replaced newer state (applied %d)", name, f.Applied())
		}
		if _, ok := getNS(t, store, "b"); !ok {
			t.Fatalf("%s snapshot lost namespace b", name)
		}
		if closed(watch) {
			t.Fatalf("skipped %s snapshot woke table watchers", name)
		}
	}
}

func TestRestoreRejectsGarbage(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("a")))
	for name, data := range map[string]string{
		"empty":     "",
		"not ordo":  "hello, this is not a snapshot",
		"truncated": "ordo-fsm-1\n\x00\x00",
	} {
		if err := f.Restore(strings.NewReader(data)); err == nil {
			t.Errorf("%s: Restore succeeded", name)
		}
	}
	if _, ok := getNS(t, store, "a"); !ok || f.Applied() != 1 {
		t.Fatal("a rejected snapshot changed the state")
	}
}

func TestSnapshotOfServers(t *testing.T) {
	src := pt.OpenStore(t)
	fs := pt.NewFSM(t, src)
	pt.ApplyOne(t, fs, 1, pt.Entry(t, "c1", register("s1"), register("s2")))
	dst := pt.OpenStore(t)
	fd := pt.NewFSM(t, dst)
	if err := fd.Restore(bytes.NewReader(persist(t, fs))); err != nil {
		t.Fatal(err)
	}
	list, err := servers.List(projections.NewView(dst))
	if err != nil || len(list) != 2 || list[0].ID != "s1" || list[1].ID != "s2" {
		t.Fatalf("restored servers %+v, %v", list, err)
	}
}
