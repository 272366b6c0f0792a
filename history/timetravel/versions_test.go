package timetravel

import (
	"context"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
)

// checkLive reads each of indexes through tt and compares it with the
// live state recorded there.
func checkLive(t *testing.T, tt *TimeTravel, h *history, indexes ...uint64) {
	t.Helper()
	for _, i := range indexes {
		if got := checksumsAt(t, tt, i); !reflect.DeepEqual(got, h.sums[i]) {
			t.Errorf("At(%d) differs from the live state", i)
		}
	}
}

// wantCount fails the test unless counter c reads want.
func wantCount(t *testing.T, c prometheus.Counter, want float64, what string) {
	t.Helper()
	if n := counterValue(t, c); n != want {
		t.Errorf("%v %s, want %v", n, what, want)
	}
}

// TestVersionsServeEveryIndex: with entries applied in raft batches, a
// read at every index (inside a batch too) is served by the versions
// store and equals a replay of the archive to that index.
func TestVersionsServeEveryIndex(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.applyIn(t, 120, 7)
	for i := uint64(1); i <= h.fsm.Applied(); i += 3 {
		if got, want := checksumsAt(t, tt, i), fromEmpty(t, h, i); !reflect.DeepEqual(got, want) {
			t.Fatalf("At(%d) differs from a replay to %d", i, i)
		}
	}
	wantCount(t, tt.metrics.backfills, 0, "backfills (the store began with the log)")
}

// TestVersionsGapBackfilled: batches the versions writer never got end
// its span; the next batch seeds it again from the live state, and the
// backfill fills the gap from the state before it: every read, in the
// gap too, equals the live state, and one span covers the whole history.
func TestVersionsGapBackfilled(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.apply(t, 60)
	before := h.record(t)
	h.fsm.SetCommitHook(nil) // these batches are lost to the versions store
	h.apply(t, 10)
	gap := h.record(t)
	h.apply(t, 10)
	h.fsm.SetCommitHook(tt.committed)
	h.apply(t, 30)
	after := h.record(t)
	backfilled(t, tt, 0)
	checkLive(t, tt, h, before, gap, after)
	wantCount(t, tt.metrics.versionsSeeds, 2, "seeds (at open and after the gap)")
	wantCount(t, tt.metrics.backfills, 1, "backfills (the gap)")
}

// TestVersionsGapAtRestart: entries applied while no TimeTravel ran (a
// crash loses the store's newest batches the same way) are backfilled at
// the next start from the state the store ended at.
func TestVersionsGapAtRestart(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.applyIn(t, 50, 4)
	before := h.record(t)
	tt.Close()
	h.applyIn(t, 40, 3)
	gap := h.record(t)
	h.applyIn(t, 20, 5)
	tt2 := newTT(t, h, Options{})
	h.applyIn(t, 20, 2)
	after := h.record(t)
	backfilled(t, tt2, 0)
	checkLive(t, tt2, h, before, gap, after)
	for i := before; i <= after; i += 7 {
		if got, want := checksumsAt(t, tt2, i), fromEmpty(t, h, i); !reflect.DeepEqual(got, want) {
			t.Fatalf("At(%d) differs from a replay to %d", i, i)
		}
	}
}

// TestVersionsReseedAfterSwitch: a projection rebuild's switch replaces
// the state outside Apply; the next batch seeds the store again, and
// reads after it equal the live state.
func TestVersionsReseedAfterSwitch(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.apply(t, 50)
	early := h.record(t)
	rb := fsm.NewRebuilder(h.fsm, fsm.RebuilderConfig{})
	defer rb.Close()
	if _, err := rb.Do(context.Background(), fsm.JobRebuild, []string{all.Projections()[0].Name()}); err != nil {
		t.Fatal(err)
	}
	h.apply(t, 20)
	i := h.record(t)
	backfilled(t, tt, 0)
	checkLive(t, tt, h, early, i)
	wantCount(t, tt.metrics.versionsSeeds, 2, "seeds (at open and after the switch)")
}

// TestVersionsSurviveRestart: a new TimeTravel over the same directory
// finds the store at the applied index, seeds nothing, and serves reads
// from before the restart.
func TestVersionsSurviveRestart(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.apply(t, 60)
	i := h.record(t)
	tt.Close()
	tt2 := newTT(t, h, Options{})
	checkLive(t, tt2, h, i)
	wantCount(t, tt2.metrics.versionsSeeds, 0, "seeds after a clean restart")
	wantCount(t, tt2.metrics.versionsReads, 1, "reads from versions")
}
