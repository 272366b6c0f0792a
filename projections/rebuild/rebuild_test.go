package rebuild_test

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// TestRebuildEqualsLive, also over grouped entries (events.NewGroup),
// which apply live command by command and replay index by index.
func TestRebuildEqualsLive(t *testing.T) {
	for _, grouped := range []bool{false, true} {
		t.Run(fmt.Sprint("grouped=", grouped), func(t *testing.T) { testRebuildEqualsLive(t, grouped) })
	}
}

func testRebuildEqualsLive(t *testing.T, grouped bool) {
	const seed = 20261130
	rng := rand.New(rand.NewSource(seed))
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live)
	logs := randomLogs(t, rng, 400)
	if grouped {
		logs = pt.Grouped(t, rng, logs)
	}
	rejected, dups := applyInBatches(t, rng, f, logs)
	if rejected == 0 || dups == 0 {
		t.Fatalf("seed %d: %d rejections, %d duplicates; the workload should have both", seed, rejected, dups)
	}
	list, err := namespaces.List(projections.NewView(live), "")
	if err != nil || len(list) < 5 {
		t.Fatalf("live has %d namespaces (%v); the workload should leave several", len(list), err)
	}

	rebuilt, st := rebuildFrom(t, live, 0)
	wantSums := pt.Checksums(t, live, allProjs())
	for name, sum := range pt.Checksums(t, rebuilt, allProjs()) {
		if sum != wantSums[name] {
			t.Errorf("seed %d: projection %s rebuilt with checksum %x, live %x", seed, name, sum, wantSums[name])
		}
	}
	// The same, row by row, for a readable failure.
	got, _ := namespaces.List(projections.NewView(rebuilt), "")
	if !reflect.DeepEqual(got, list) {
		t.Errorf("rebuilt namespaces differ from live")
	}
	last, _ := archive.Last(live)
	if n := pt.ArchiveLen(t, live); st.Events != n || st.Last != last || pt.AppliedIndex(t, rebuilt) != last {
		t.Errorf("stats %+v, rebuilt applied %d; archive has %d events up to %d", st, pt.AppliedIndex(t, rebuilt), n, last)
	}
	if len(pt.Archived(t, rebuilt)) != 0 {
		t.Error("Rebuild copied the archive; it writes projections only")
	}
}

// TestChecksumDetectsCorruption shows the rebuild comparison can fail: any
// change to a row, a table index or the set of rows changes the checksum of
// that projection and only that one.
func TestChecksumDetectsCorruption(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live)
	applyInBatches(t, rng, f, randomLogs(t, rng, 200))
	want := pt.Checksums(t, live, allProjs())
	victim, err := namespaces.List(projections.NewView(live), "")
	if err != nil || len(victim) == 0 {
		t.Fatalf("no namespace to corrupt: %v", err)
	}
	v := victim[0]
	row, err := projections.NewView(live).Get(namespaces.Table, v.Name)
	if err != nil {
		t.Fatal(err)
	}
	otherValue, err := events.Marshal(&events.Namespace{Name: v.Name, Description: v.Description + "!", Meta: v.Meta})
	if err != nil {
		t.Fatal(err)
	}

	for name, corrupt := range map[string]func(kv.Writer) error{
		"different value": func(w kv.Writer) error {
			return rebuild.PutRow(w, namespaces.Table, v.Name, projections.Row{CreateIndex: row.CreateIndex, ModifyIndex: row.ModifyIndex, Value: otherValue})
		},
		"different modify index": func(w kv.Writer) error {
			return rebuild.PutRow(w, namespaces.Table, v.Name, projections.Row{CreateIndex: row.CreateIndex, ModifyIndex: row.ModifyIndex + 1, Value: row.Value})
		},
		"extra row": func(w kv.Writer) error {
			return rebuild.PutRow(w, namespaces.Table, "zz-extra", row)
		},
		"table index": func(w kv.Writer) error {
			idx, _ := projections.NewView(w).TableIndex(namespaces.Table)
			return rebuild.SetTableIndex(w, namespaces.Table, idx+1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			rebuilt, _ := rebuildFrom(t, live, 0)
			if got := pt.Checksums(t, rebuilt, allProjs()); !reflect.DeepEqual(got, want) {
				t.Fatal("rebuild differs before corruption")
			}
			b := rebuilt.Batch()
			if err := corrupt(b); err != nil {
				t.Fatal(err)
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			got := pt.Checksums(t, rebuilt, allProjs())
			if got["namespaces"] == want["namespaces"] {
				t.Error("corrupt namespaces projection has the live checksum")
			}
			if got["servers"] != want["servers"] {
				t.Error("corrupting namespaces changed the servers checksum")
			}
		})
	}
}

func TestRebuildUpTo(t *testing.T) {
	rng := rand.New(rand.NewSource(99))
	logs := randomLogs(t, rng, 120)
	live := pt.OpenStore(t)
	applyInBatches(t, rng, pt.NewFSM(t, live), logs)

	for _, k := range []int{1, 37, 60, 119} {
		// A second FSM that applied only the first k entries is what a
		// rebuild up to index k must equal.
		partial := pt.OpenStore(t)
		applyInBatches(t, rng, pt.NewFSM(t, partial), logs[:k])
		rebuilt, st := rebuildFrom(t, live, uint64(k))
		if st.Last > uint64(k) {
			t.Fatalf("rebuild to %d went to %d", k, st.Last)
		}
		if got, want := pt.Checksums(t, rebuilt, allProjs()), pt.Checksums(t, partial, allProjs()); !reflect.DeepEqual(got, want) {
			t.Errorf("rebuild to %d differs from applying the first %d entries", k, k)
		}
	}
}

func TestRebuildProgress(t *testing.T) {
	// More entries than one rebuild batch (2048).
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live)
	const n = 2100
	logs := make([]raftlog.Log, 0, 64)
	for i := 1; i <= n; i++ {
		logs = append(logs, pt.Log(t, uint64(i), pt.Entry(t, fmt.Sprint("c", i), upsert(fmt.Sprint("ns", i%50)))))
		if len(logs) == 64 || i == n {
			pt.Apply(t, f, logs...)
			logs = logs[:0]
		}
	}
	dst := pt.OpenStore(t)
	var calls []rebuild.Stats
	st, err := rebuild.Rebuild(live, dst, allProjs(), 0, func(s rebuild.Stats) { calls = append(calls, s) })
	if err != nil {
		t.Fatal(err)
	}
	if st != (rebuild.Stats{Events: n, Entries: n, Last: n}) {
		t.Fatalf("stats %+v", st)
	}
	if len(calls) < 2 || calls[len(calls)-1] != st {
		t.Fatalf("progress calls %+v, want at least two ending with %+v", calls, st)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].Events < calls[i-1].Events || calls[i].Last < calls[i-1].Last {
			t.Fatalf("progress went backwards: %+v", calls)
		}
	}
	if !reflect.DeepEqual(pt.Checksums(t, dst, allProjs()), pt.Checksums(t, live, allProjs())) {
		t.Fatal("rebuild over several batches differs from live")
	}
}

func TestRebuildEmptyArchive(t *testing.T) {
	src := pt.OpenStore(t)
	dst, st := rebuildFrom(t, src, 0)
	if st != (rebuild.Stats{}) {
		t.Fatalf("stats %+v", st)
	}
	if !reflect.DeepEqual(pt.Checksums(t, dst, allProjs()), pt.Checksums(t, src, allProjs())) {
		t.Fatal("empty rebuild differs from an empty store")
	}
}

func TestRebuildCorruptArchive(t *testing.T) {
	src := pt.OpenStore(t)
	b := src.Batch()
	if err := archive.Append(b, 1, 0, []byte{0xc1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := rebuild.Rebuild(src, pt.OpenStore(t), allProjs(), 0, nil); err == nil {
		t.Fatal("Rebuild of a corrupt archive succeeded")
	}
	// An event of a type this build does not know cannot be replayed.
	b = src.Batch()
	data, _ := events.EncodeEvent(&events.Event{Type: "NamespaceUpserted", Version: 99, Index: 1, Payload: []byte{0x80}})
	archive.Append(b, 1, 0, data)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := rebuild.Rebuild(src, pt.OpenStore(t), allProjs(), 0, nil); !errors.Is(err, events.ErrFutureVersion) {
		t.Fatalf("Rebuild of a future version: %v, want ErrFutureVersion", err)
	}
}

// A rebuild into a store that already holds keys cannot trust its own
// memory for absent keys; it reads through and still matches live.
func TestRebuildIntoNonEmptyStore(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live)
	applyInBatches(t, rng, f, randomLogs(t, rng, 200))

	dst := pt.OpenStore(t)
	b := dst.Batch()
	if err := b.Set([]byte("zz/unrelated"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := rebuild.Rebuild(live, dst, allProjs(), 0, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := pt.Checksums(t, dst, allProjs()), pt.Checksums(t, live, allProjs()); !reflect.DeepEqual(got, want) {
		t.Fatal("rebuild into a non-empty store differs from live")
	}
}
