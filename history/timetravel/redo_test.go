package timetravel

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/servers"
)

// TestRedoGapReplaysEvents: batches the redo log never got (a full queue)
// break its chain; a read across the gap applies the records up to it and
// replays events from there, and still equals the live state.
func TestRedoGapReplaysEvents(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{CacheSize: 1, DisableVersions: true})
	h.apply(t, 100)
	if _, err := tt.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	h.apply(t, 50)
	before := h.record(t)
	h.fsm.SetCommitHook(nil) // these batches are lost to the redo log
	h.apply(t, 20)
	h.fsm.SetCommitHook(tt.redo.committed)
	h.apply(t, 30)
	after := h.record(t)
	for _, i := range []uint64{before, after} {
		if got := checksumsAt(t, tt, i); !reflect.DeepEqual(got, h.sums[i]) {
			t.Errorf("At(%d) differs from the live state", i)
		}
	}
	if n := counterValue(t, tt.metrics.redoApplied); n < 50 {
		t.Errorf("%v redo records applied, want the 50 before the gap at least", n)
	}
}

// TestRedoSurvivesRestart: a new TimeTravel over the same data directory
// finds the redo log and serves from it.
func TestRedoSurvivesRestart(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{DisableVersions: true})
	h.apply(t, 60)
	if _, err := tt.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	h.apply(t, 40)
	i := h.record(t)
	tt.Close()

	tt2 := newTT(t, h, Options{DisableVersions: true})
	if got := checksumsAt(t, tt2, i); !reflect.DeepEqual(got, h.sums[i]) {
		t.Errorf("At(%d) after a restart differs from the live state", i)
	}
	if n := counterValue(t, tt2.metrics.redoApplied); n < 40 {
		t.Errorf("%v redo records applied after a restart, want 40", n)
	}
}

// TestRedoServesEveryTable: where redo records reach, a read naming some
// tables gets a state of every projection, so a read of another table
// finds it rather than straying.
func TestRedoServesEveryTable(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{DisableVersions: true})
	h.apply(t, 80)
	i := h.record(t)
	h.apply(t, 10)
	redoCaughtUp(t, h, tt)
	st, err := tt.At(context.Background(), i, namespaces.Table)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	if _, err := servers.List(st.View()); err != nil || st.Strayed() {
		t.Fatalf("reading the servers table: %v, strayed %v", err, st.Strayed())
	}
	if got := checksumsAt(t, tt, i); !reflect.DeepEqual(got, h.sums[i]) {
		t.Errorf("At(%d) differs from the live state", i)
	}
}

// TestRedoPrunedWithCheckpoints: the redo log keeps segments from the
// oldest dense checkpoint on; older ones go when checkpoints are pruned.
func TestRedoPrunedWithCheckpoints(t *testing.T) {
	defer func(n int64) { redoSegmentBytes = n }(redoSegmentBytes)
	redoSegmentBytes = 4 << 10
	h := newHistory(t)
	tt := newTT(t, h, Options{CheckpointsKept: 2, SparseCheckpointsKept: -1, DisableVersions: true})
	segments := func() int {
		tt.redo.log.Flush()
		names, _ := filepath.Glob(filepath.Join(redoDir(h.dir), "*.redo"))
		return len(names)
	}
	for range 5 {
		h.apply(t, 60)
		if _, err := tt.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	cps := tt.Checkpoints()
	if len(cps) != 2 {
		t.Fatalf("checkpoints %v, want 2", cps)
	}
	if segments() == 0 {
		t.Fatal("no redo segments")
	}
	lo, _ := tt.redo.log.Span()
	if lo > cps[0] {
		t.Errorf("redo starts at %d, after the oldest checkpoint %d", lo, cps[0])
	}
	if cps[0]-lo > 30 { // a segment holds a few entries' batches
		t.Errorf("redo kept from %d, far below the oldest checkpoint %d", lo, cps[0])
	}
	if got := checksumsAt(t, tt, h.record(t)); !reflect.DeepEqual(got, h.sums[h.fsm.Applied()]) {
		t.Error("the newest state differs from the live one")
	}
}

// redoCaughtUp waits until the redo writer, which runs behind the FSM's
// commits, has logged every batch committed so far from the start.
func redoCaughtUp(t *testing.T, h *history, tt *TimeTravel) {
	t.Helper()
	applied := h.fsm.Applied()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if reached, _ := tt.redo.log.Reach(0, applied); reached == applied {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redo log did not reach %d", applied)
		}
		time.Sleep(time.Millisecond)
	}
}
