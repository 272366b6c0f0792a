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
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// history is a live FSM fed random entries, with the checksums of its
// projections recorded after chosen indexes.
type history struct {
	dir   string
	store *kv.Store
	fsm   *fsm.FSM
	next  uint64
	times map[uint64]int64 // leader time of each applied index
	sums  map[uint64]map[string][32]byte
	rng   *rand.Rand
	// replayed is fromEmpty's replay of the archive: its store, the index
	// it reached and the checksums there.
	replayed struct {
		store *kv.Store
		to    uint64
		sums  map[string][32]byte
	}
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

// newTT opens a TimeTravel over h and runs its backfill until the test
// ends.
func newTT(t *testing.T, h *history, o Options) *TimeTravel {
	t.Helper()
	tt := openTT(t, h, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := tt.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return tt
}

// openTT opens a TimeTravel over h, with no backfill running.
func openTT(t *testing.T, h *history, o Options) *TimeTravel {
	t.Helper()
	tt, err := New(Config{Options: o, DataDir: h.dir, FSM: h.fsm, Projections: all.Projections(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tt.Close)
	return tt
}

// backfilled waits until the versions store answers every index from
// from to the applied index and no backfill is under way.
func backfilled(t *testing.T, tt *TimeTravel, from uint64) {
	t.Helper()
	tt.versions.settle()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tt.WaitBackfilled(ctx); err != nil {
		t.Fatalf("waiting for the backfill: %v", err)
	}
	spans := tt.VersionSpans()
	ok := len(spans) > 0 && spans[0].From == from && spans[len(spans)-1].To == tt.cfg.FSM.Applied()
	for i := 0; ok && i+1 < len(spans); i++ {
		ok = spans[i].To+1 == spans[i+1].From
	}
	if !ok {
		t.Fatalf("spans %+v once backfilled, want every index from %d to %d", spans, from, tt.cfg.FSM.Applied())
	}
}

func checksumsAt(t *testing.T, tt *TimeTravel, i uint64) map[string][32]byte {
	t.Helper()
	st, err := tt.At(context.Background(), i)
	if err != nil {
		t.Fatalf("At(%d): %v", i, err)
	}
	defer st.Release()
	if got := pt.AppliedIndex(t, st.reader); got != i {
		t.Fatalf("At(%d) reports applied index %d", i, got)
	}
	return pt.Checksums(t, st.reader, all.Projections())
}

// fromEmpty returns the checksums of a replay of the live archive from
// an empty store up to i. Asked for increasing indexes, it continues the
// last replay instead of starting over (a replay in steps equals one from
// empty: rebuild's TestReplayInStepsEqualsRebuild); asked for a lower
// one, it starts again from an empty store.
func fromEmpty(t *testing.T, h *history, i uint64) map[string][32]byte {
	t.Helper()
	r := &h.replayed
	if r.store != nil && i == r.to {
		return r.sums
	}
	if r.store == nil || i < r.to {
		r.store = pt.OpenStore(t)
	}
	if _, err := rebuild.Replay(context.Background(), h.store, r.store, all.Projections(), i, nil); err != nil {
		t.Fatal(err)
	}
	r.to, r.sums = i, pt.Checksums(t, r.store, all.Projections())
	return r.sums
}

// TestAtEqualsLiveState reads states at indexes inside and between raft
// batches and compares them with what the live store held at that index,
// and with a replay from the archive's start.
func TestAtEqualsLiveState(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	for range 6 {
		h.applyIn(t, 150, 7)
		h.record(t)
		h.apply(t, 1)
		h.record(t)
		h.applyIn(t, 40, 3)
		h.record(t)
	}
	tt.versions.settle()
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
			t.Errorf("At(%d) differs from a replay from empty", i)
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
			if pt.AppliedIndex(t, st.reader) != i {
				t.Errorf("At(%d) reports %d", i, pt.AppliedIndex(t, st.reader))
			}
			st.Release()
			break
		}
	}
	if n := counterValue(t, tt.metrics.versionsReads); n == 0 {
		t.Error("no read served from versions")
	}
}

// TestAtRange: an index outside [1, applied] is refused, and any read
// after Close. (Opening also removes what earlier versions kept.)
func TestAtRange(t *testing.T) {
	h := newHistory(t)
	h.apply(t, 5)
	for _, dir := range []string{"checkpoints/100", "redo"} {
		if err := os.MkdirAll(filepath.Join(h.dir, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tt := newTT(t, h, Options{})
	for _, dir := range []string{"checkpoints", "redo"} {
		if _, err := os.Stat(filepath.Join(h.dir, dir)); !os.IsNotExist(err) {
			t.Errorf("%s left by an earlier version: %v", dir, err)
		}
	}
	for _, i := range []uint64{0, h.fsm.Applied() + 1} {
		if _, err := tt.At(context.Background(), i); !errors.Is(err, ErrBeyondApplied) {
			t.Errorf("At(%d) = %v, want ErrBeyondApplied", i, err)
		}
	}
	tt.Close()
	if _, err := tt.At(context.Background(), 3); !errors.Is(err, ErrClosed) {
		t.Fatalf("At after Close = %v, want ErrClosed", err)
	}
}

// TestDisabledServesNothing: with no versions kept, every read is refused
// for good, and no store is created.
func TestDisabledServesNothing(t *testing.T) {
	h := newHistory(t)
	h.apply(t, 20)
	tt := newTT(t, h, Options{DisableVersions: true})
	var ns *NotServedError
	if _, err := tt.At(context.Background(), 10); !errors.As(err, &ns) || ns.Retryable() {
		t.Fatalf("At with versions disabled = %v", err)
	}
	if st := tt.Status(); st.Versions != nil {
		t.Fatalf("status with versions disabled: %+v", st)
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
