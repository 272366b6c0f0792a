package timetravel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// history is a live FSM fed random entries, with the checksums of its
// projections recorded after chosen indexes.
type history struct {
	dir   string
	store *kv.Store
	fsm   *projections.FSM
	next  uint64
	times map[uint64]int64 // leader time of each applied index
	sums  map[uint64]map[string][32]byte
	rng   *rand.Rand
}

func newHistory(t *testing.T) *history {
	dir := t.TempDir()
	store, err := kv.Open(filepath.Join(dir, "state"), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return &history{dir: dir, store: store, fsm: pt.NewFSM(t, store), next: 1,
		times: map[uint64]int64{}, sums: map[uint64]map[string][32]byte{}, rng: rand.New(rand.NewSource(7))}
}

// apply applies n random entries one by one: namespace upserts and
// deletes, server changes, preconditions that fail, retried commands, and
// gaps in the index (raft's own entries never reach the FSM).
func (h *history) apply(t *testing.T, n int) { h.applyIn(t, n, 1) }

// applyIn is apply with the entries applied batch at a time, as raft
// hands the FSM several committed entries at once.
func (h *history) applyIn(t *testing.T, n, batch int) {
	t.Helper()
	var logs []raftlog.Log
	for range n {
		if h.rng.Intn(15) == 0 {
			h.next++ // an index the FSM never sees
		}
		name := fmt.Sprintf("ns-%02d", h.rng.Intn(30))
		var ps []events.Payload
		switch r := h.rng.Intn(10); {
		case r < 6:
			ps = append(ps, &events.NamespaceUpserted{Namespace: events.Namespace{Name: name, Description: fmt.Sprint("d", h.rng.Intn(9))}})
		case r < 8:
			ps = append(ps, &events.NamespaceDeleted{Name: name})
		default:
			id := fmt.Sprint("s", h.rng.Intn(3))
			ps = append(ps, &events.ServerRegistered{ID: id, RaftAddr: id + ":4647", HTTPAddr: id + ":4646"},
				&events.NamespaceUpserted{Namespace: events.Namespace{Name: name + "-x"}})
		}
		cmd := fmt.Sprint("cmd-", h.next)
		if h.rng.Intn(25) == 0 && h.next > 2 {
			cmd = fmt.Sprint("cmd-", 1+h.rng.Intn(int(h.next)-1)) // a retry: no events
		}
		e := pt.Entry(t, cmd, ps...)
		e.Time = pt.LeaderTime + int64(h.next)*int64(time.Millisecond)
		if h.rng.Intn(8) == 0 {
			e.Preconditions = []events.Precondition{{Table: namespaces.Table, Key: name, Op: events.ModifyIndex, Index: 999999}}
		}
		logs = append(logs, pt.Log(t, h.next, e))
		h.times[h.next] = e.Time
		h.next++
		if len(logs) == batch {
			pt.Apply(t, h.fsm, logs...)
			logs = nil
		}
	}
	if len(logs) > 0 {
		pt.Apply(t, h.fsm, logs...)
	}
}

// record remembers the live checksums at the applied index.
func (h *history) record(t *testing.T) uint64 {
	t.Helper()
	i := h.fsm.Applied()
	h.sums[i] = pt.Checksums(t, h.store, all.Projections())
	return i
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTT(t *testing.T, h *history, o Options) *TimeTravel {
	t.Helper()
	tt, err := New(Config{Options: o, DataDir: h.dir, FSM: h.fsm, Projections: all.Projections(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tt.Close)
	return tt
}

func checksumsAt(t *testing.T, tt *TimeTravel, i uint64) map[string][32]byte {
	t.Helper()
	st, err := tt.At(context.Background(), i)
	if err != nil {
		t.Fatalf("At(%d): %v", i, err)
	}
	defer st.Release()
	if got := pt.AppliedIndex(t, st.reader.r); got != i {
		t.Fatalf("At(%d) reports applied index %d", i, got)
	}
	return pt.Checksums(t, st.reader.r, all.Projections())
}

// fromEmpty replays the live archive into a new store up to i.
func fromEmpty(t *testing.T, h *history, i uint64) map[string][32]byte {
	t.Helper()
	dst := pt.OpenStore(t)
	if _, err := projections.Replay(context.Background(), h.store, dst, all.Projections(), i, nil); err != nil {
		t.Fatal(err)
	}
	return pt.Checksums(t, dst, all.Projections())
}

// TestAtEqualsLiveState materialises states below, at and across
// checkpoints and compares them with what the live store held at that
// index, and with a replay from the archive's start.
//
// It runs with the versions store (every read a seek per key), with the
// redo log (records applied to the checkpoint, then events for the rest)
// and with neither (events only).
func TestAtEqualsLiveState(t *testing.T) {
	for name, o := range map[string]Options{
		"versions": {CacheSize: 2, CheckpointsKept: 10},
		"redo":     {CacheSize: 2, CheckpointsKept: 10, DisableVersions: true},
		"events":   {CacheSize: 2, CheckpointsKept: 10, DisableVersions: true, DisableRedo: true},
	} {
		t.Run(name, func(t *testing.T) { testAtEqualsLiveState(t, o) })
	}
}

func testAtEqualsLiveState(t *testing.T, o Options) {
	h := newHistory(t)
	tt := newTT(t, h, o)
	for range 6 {
		h.apply(t, 150)
		h.record(t)
		if _, err := tt.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		h.apply(t, 1)
		h.record(t)
		h.apply(t, 40)
		h.record(t)
	}
	h.apply(t, 30)
	h.record(t)
	cps := tt.Checkpoints()
	if len(cps) != 6 {
		t.Fatalf("checkpoints %v, want 6", cps)
	}
	var idx []uint64
	for i := range h.sums {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		got := checksumsAt(t, tt, i)
		if !reflect.DeepEqual(got, h.sums[i]) {
			t.Errorf("At(%d) differs from the live state at %d", i, i)
		}
		if want := fromEmpty(t, h, i); !reflect.DeepEqual(got, want) {
			t.Errorf("At(%d) (checkpoints %v) differs from a replay from empty", i, cps)
		}
	}
	// An index with no events of its own (a gap or a rejection) equals the
	// state at the archived index before it, but reports its own index.
	for i := uint64(2); i < h.fsm.Applied(); i++ {
		if _, ok := h.times[i]; !ok {
			st, err := tt.At(context.Background(), i)
			if err != nil {
				t.Fatal(err)
			}
			if pt.AppliedIndex(t, st.reader.r) != i {
				t.Errorf("At(%d) reports %d", i, pt.AppliedIndex(t, st.reader.r))
			}
			st.Release()
			break
		}
	}
	redo := o.DisableVersions && !o.DisableRedo
	if applied := counterValue(t, tt.metrics.redoApplied); (applied > 0) != redo {
		t.Errorf("%v redo records applied with %+v", applied, o)
	}
	if n := counterValue(t, tt.metrics.versionsReads); (n > 0) == o.DisableVersions {
		t.Errorf("%v reads served from versions with %+v", n, o)
	}
}

func TestAtRange(t *testing.T) {
	h := newHistory(t)
	h.apply(t, 5)
	tt := newTT(t, h, Options{})
	for _, i := range []uint64{0, h.fsm.Applied() + 1} {
		if _, err := tt.At(context.Background(), i); !errors.Is(err, ErrBeyondApplied) {
			t.Errorf("At(%d) = %v, want ErrBeyondApplied", i, err)
		}
	}
}

// dirState describes a directory's files: name, size and modification time.
func dirState(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestCheckpointsStayImmutable(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.apply(t, 200)
	cp, err := tt.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	before := dirState(t, filepath.Join(h.dir, "checkpoints"))
	h.apply(t, 100)
	for _, i := range []uint64{cp, cp + 20, h.fsm.Applied()} {
		st, err := tt.At(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		st.Release()
	}
	if after := dirState(t, filepath.Join(h.dir, "checkpoints")); !reflect.DeepEqual(before, after) {
		t.Fatalf("checkpoint directory changed:\nbefore %v\nafter  %v", before, after)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestCheckpointPruning(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{CheckpointsKept: 2})
	var taken []uint64
	for range 3 {
		h.apply(t, 20)
		i, err := tt.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, i)
	}
	// A checkpoint at an index already kept changes nothing.
	if i, err := tt.Checkpoint(); err != nil || i != taken[2] {
		t.Fatalf("second checkpoint at %d = %d, %v", taken[2], i, err)
	}
	dir := filepath.Join(h.dir, "checkpoints")
	want := []string{fmt.Sprint(taken[1]), fmt.Sprint(taken[2])}
	if got := listDir(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpoint dirs %v, want %v", got, want)
	}
	if got := tt.Checkpoints(); !reflect.DeepEqual(got, taken[1:]) {
		t.Fatalf("Checkpoints() = %v, want %v", got, taken[1:])
	}

	// A checkpoint a reader is copying goes only once the reader is done.
	at, _, release, ok := tt.cps.acquire(taken[1])
	if !ok || at != taken[1] {
		t.Fatalf("acquire(%d) = %d, %v", taken[1], at, ok)
	}
	h.apply(t, 20)
	if _, err := tt.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); len(got) != 3 || got[0] != fmt.Sprint(taken[1]) {
		t.Fatalf("pinned checkpoint removed early: %v", got)
	}
	release()
	if got := listDir(t, dir); len(got) != 2 || slices.Contains(got, fmt.Sprint(taken[1])) {
		t.Fatalf("pinned checkpoint kept after release: %v", got)
	}

	// A restart keeps the published checkpoints and drops a half-written one.
	tt.Close()
	if err := os.Mkdir(filepath.Join(dir, tmpPrefix+"99"), 0o755); err != nil {
		t.Fatal(err)
	}
	tt2 := newTT(t, h, Options{CheckpointsKept: 2})
	if got := listDir(t, dir); len(got) != 2 || !reflect.DeepEqual(tt2.Checkpoints(), tt.Checkpoints()) {
		t.Fatalf("after restart: dirs %v, Checkpoints %v", got, tt2.Checkpoints())
	}
}

func TestCacheEvictionCleansDirs(t *testing.T) {
	h := newHistory(t)
	h.apply(t, 60)
	// A scratch directory a crash left behind goes at start.
	scratch := filepath.Join(h.dir, "timetravel")
	if err := os.MkdirAll(filepath.Join(scratch, "7-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	tt := newTT(t, h, Options{CacheSize: 2})
	if got := listDir(t, scratch); len(got) != 0 {
		t.Fatalf("scratch dir not emptied at start: %v", got)
	}
	at := func(i uint64) *State {
		st, err := tt.At(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	at(10).Release()
	held := at(20) // held across its eviction
	at(30).Release()
	if got := tt.Cached(); !reflect.DeepEqual(got, []uint64{30, 20}) {
		t.Fatalf("cached %v, want [30 20]", got)
	}
	if got := listDir(t, scratch); len(got) != 2 {
		t.Fatalf("scratch dirs %v, want 2", got)
	}
	at(40).Release() // evicts 20, which is held
	if got := tt.Cached(); !reflect.DeepEqual(got, []uint64{40, 30}) {
		t.Fatalf("cached %v, want [40 30]", got)
	}
	if got := listDir(t, scratch); len(got) != 3 {
		t.Fatalf("scratch dirs %v, want 3 (one evicted but held)", got)
	}
	// The evicted state still reads.
	if _, err := namespaces.List(held.View(), ""); err != nil {
		t.Fatalf("read an evicted, held state: %v", err)
	}
	held.Release()
	held.Release() // idempotent
	if got := listDir(t, scratch); len(got) != 2 {
		t.Fatalf("scratch dirs %v after release, want 2", got)
	}
	// A cache hit materialises nothing.
	before := tt.cache.indexes()
	at(30).Release()
	if got := tt.Cached(); got[0] != 30 || len(got) != len(before) {
		t.Fatalf("cached %v after a hit on 30", got)
	}
	tt.Close()
	if got := listDir(t, scratch); len(got) != 0 {
		t.Fatalf("scratch dirs %v after Close", got)
	}
	if _, err := tt.At(context.Background(), 5); !errors.Is(err, ErrClosed) {
		t.Fatalf("At after Close = %v, want ErrClosed", err)
	}
}

func TestConcurrentReadsShareOneMaterialisation(t *testing.T) {
	h := newHistory(t)
	h.apply(t, 300)
	tt := newTT(t, h, Options{})
	var wg sync.WaitGroup
	states := make([]*State, 8)
	for n := range states {
		wg.Go(func() {
			st, err := tt.At(context.Background(), 250)
			if err != nil {
				t.Error(err)
				return
			}
			states[n] = st
		})
	}
	wg.Wait()
	for _, st := range states {
		if st != nil {
			st.Release()
		}
	}
	if got := listDir(t, filepath.Join(h.dir, "timetravel")); len(got) != 1 {
		t.Fatalf("scratch dirs %v, want one shared state", got)
	}
	// A reader whose context ends stops waiting, without error for others.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tt.At(ctx, 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("At with a cancelled context = %v", err)
	}
}

func TestResolveTime(t *testing.T) {
	h := newHistory(t)
	h.apply(t, 400)
	tt := newTT(t, h, Options{})
	applied := h.fsm.Applied()
	// want is the last archived index whose time is at or before at, by
	// brute force over the archive.
	want := func(at int64) uint64 {
		var best uint64
		for _, ev := range pt.Archived(t, h.store) {
			if ev.Time <= at && ev.Index > best {
				best = ev.Index
			}
		}
		return best
	}
	base := pt.LeaderTime
	for _, at := range []int64{
		base, base + int64(time.Millisecond) - 1, base + int64(time.Millisecond),
		base + 57*int64(time.Millisecond) + 3, base + int64(applied)*int64(time.Millisecond),
		base + 10*int64(time.Hour),
	} {
		got, ok, err := tt.ResolveTime(time.Unix(0, at))
		if err != nil {
			t.Fatal(err)
		}
		if w := want(at); got != w || ok != (w > 0) {
			t.Errorf("ResolveTime(base+%v) = %d, %v; want %d", time.Duration(at-base), got, ok, w)
		}
	}
	for i := uint64(1); i <= applied; i += 13 {
		at := h.times[i]
		if at == 0 {
			continue
		}
		if got, _, _ := tt.ResolveTime(time.Unix(0, at)); got != want(at) {
			t.Errorf("ResolveTime(time of %d) = %d, want %d", i, got, want(at))
		}
	}
}

// TestResolveTimeOutOfOrder covers commands that committed in the other
// order than they were decided: the look past the boundary finds the
// last one at or before the time asked.
func TestResolveTimeOutOfOrder(t *testing.T) {
	h := newHistory(t)
	ms := int64(time.Millisecond)
	for i, off := range []int64{10, 20, 30, 25, 40, 35, 50} {
		e := pt.Entry(t, fmt.Sprint("c", i), &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprint("n", i)}})
		e.Time = pt.LeaderTime + off*ms
		pt.ApplyOne(t, h.fsm, uint64(i+1), e)
	}
	tt := newTT(t, h, Options{})
	for _, tc := range []struct {
		off  int64
		want uint64
	}{{5, 0}, {10, 1}, {26, 4}, {31, 4}, {36, 6}, {45, 6}, {50, 7}} {
		got, ok, err := tt.ResolveTime(time.Unix(0, pt.LeaderTime+tc.off*ms))
		if err != nil || got != tc.want || ok != (tc.want > 0) {
			t.Errorf("ResolveTime(+%dms) = %d, %v, %v; want %d", tc.off, got, ok, err, tc.want)
		}
	}
}

func TestRunTakesCheckpoints(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{CheckpointEvery: 100, CheckpointMinInterval: time.Nanosecond, CheckpointsKept: 3})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tt.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(tt.Checkpoints()) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints %v after %d entries", tt.Checkpoints(), h.fsm.Applied())
		}
		h.apply(t, 10)
	}
	cps := tt.Checkpoints()
	for i := 1; i < len(cps); i++ {
		if cps[i]-cps[i-1] < 100 {
			t.Errorf("checkpoints %v closer than CheckpointEvery", cps)
		}
	}
}

func TestRunRespectsMinInterval(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{CheckpointEvery: 10, CheckpointMinInterval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tt.Run(ctx) }()
	h.apply(t, 15)
	deadline := time.Now().Add(10 * time.Second)
	for len(tt.Checkpoints()) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no first checkpoint")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.apply(t, 50)
	// Give Run every chance to take a second one it must not take.
	for range 20 {
		h.apply(t, 1)
	}
	cancel()
	<-done
	if got := tt.Checkpoints(); len(got) != 1 {
		t.Fatalf("checkpoints %v within one interval", got)
	}
}

// TestPruneTiers keeps the newest checkpoints dense and older ones sparse.
func TestPruneTiers(t *testing.T) {
	for _, tc := range []struct {
		have          []uint64
		dense, sparse int
		gap           uint64
		want          []uint64
	}{
		{[]uint64{10, 20, 30, 40, 50}, 2, 0, 100, []uint64{40, 50}},
		{[]uint64{10, 20, 30, 40, 50}, 2, 5, 20, []uint64{20, 40, 50}},
		{[]uint64{10, 20, 30, 40, 50}, 2, 5, 10, []uint64{10, 20, 30, 40, 50}},
		{[]uint64{10, 20, 30, 40, 50}, 2, 1, 20, []uint64{20, 40, 50}},
		{[]uint64{10, 20, 30, 40, 50}, 2, 1, 10, []uint64{30, 40, 50}},
		{[]uint64{5, 12, 19, 26, 33, 40, 47, 54, 61}, 3, 2, 20, []uint64{5, 26, 47, 54, 61}},
		{[]uint64{5, 12, 19, 26, 33, 40, 47, 54, 61}, 3, 1, 20, []uint64{26, 47, 54, 61}},
		{[]uint64{10, 20}, 3, 3, 5, []uint64{10, 20}},
		{nil, 3, 3, 5, nil},
	} {
		dir := t.TempDir()
		for _, i := range tc.have {
			if err := os.Mkdir(filepath.Join(dir, fmt.Sprint(i)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		c, err := openCheckpoints(dir)
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.prune(tc.dense, tc.sparse, tc.gap)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.list(); !reflect.DeepEqual(got, tc.want) || n != len(tc.have)-len(tc.want) {
			t.Errorf("prune(%v, %d, %d, %d) kept %v (removed %d), want %v", tc.have, tc.dense, tc.sparse, tc.gap, got, n, tc.want)
		}
		if got := listDir(t, dir); len(got) != len(tc.want) {
			t.Errorf("prune(%v): dirs %v", tc.have, got)
		}
	}
}

// TestAtSomeTables materialises only the projections a read needs: their
// tables equal the live ones at that index, a read of another table is
// marked Strayed, and a cached state of every projection serves too.
//
// The versions store and the redo log are disabled: with the first,
// nothing is materialised; with the second, a state of every projection
// costs hardly more, and At builds that instead (TestRedoServesEveryTable).
func TestAtSomeTables(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{CacheSize: 4, DisableRedo: true, DisableVersions: true})
	h.apply(t, 200)
	if _, err := tt.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	h.apply(t, 150)
	i := h.record(t)
	h.apply(t, 50)

	st, err := tt.At(context.Background(), i, namespaces.Table)
	if err != nil {
		t.Fatal(err)
	}
	ns := []projections.Projection{namespaces.Projection{}}
	if got, want := pt.Checksums(t, st.reader.r, ns), h.sums[i]; got["namespaces"] != want["namespaces"] {
		t.Fatal("namespaces at i differ from the live ones at i")
	}
	if _, err := namespaces.List(st.View(), ""); err != nil || st.Strayed() {
		t.Fatalf("reading its own table: %v, strayed %v", err, st.Strayed())
	}
	if _, err := servers.Get(st.View(), "s1"); !errors.Is(err, projections.ErrNotFound) || !st.Strayed() {
		t.Fatalf("reading another projection's table: %v, strayed %v", err, st.Strayed())
	}
	st.Release()

	// Every projection, then the namespaces alone again: the full state serves.
	full, err := tt.At(context.Background(), i)
	if err != nil {
		t.Fatal(err)
	}
	full.Release()
	before := len(listDir(t, filepath.Join(h.dir, "timetravel")))
	again, err := tt.At(context.Background(), i, namespaces.Table)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := servers.List(again.View()); err != nil || again.Strayed() {
		t.Fatalf("a full state read for one table: %v, strayed %v", err, again.Strayed())
	}
	again.Release()
	if after := len(listDir(t, filepath.Join(h.dir, "timetravel"))); after != before {
		t.Fatalf("scratch states %d → %d: the full state was not reused", before, after)
	}
	// A table no projection owns brings every projection forward.
	if projs, set := tt.owners([]string{"no-such-table"}); set != "" || len(projs) != len(all.Projections()) {
		t.Fatalf("owners of an unknown table: %q", set)
	}
}
