package timetravel

import (
	"context"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
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
// store, with nothing materialised, and equals a replay of the archive to
// that index.
func TestVersionsServeEveryIndex(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.applyIn(t, 120, 7)
	for i := uint64(1); i <= h.fsm.Applied(); i += 3 {
		if got, want := checksumsAt(t, tt, i), fromEmpty(t, h, i); !reflect.DeepEqual(got, want) {
			t.Fatalf("At(%d) differs from a replay to %d", i, i)
		}
	}
	wantCount(t, tt.metrics.materialisations, 0, "states materialised")
	if n := counterValue(t, tt.metrics.versionsReads); n == 0 {
		t.Error("no read served from versions")
	}
}

// TestVersionsStartLate: a store first opened on a server with history
// is seeded from the live state; reads from there are served by it, and
// older ones still come from checkpoints and events, equal to the live
// state.
func TestVersionsStartLate(t *testing.T) {
	h := newHistory(t)
	h.apply(t, 40)
	old := h.record(t)
	h.apply(t, 40)
	seeded := h.record(t)
	tt := newTT(t, h, Options{CacheSize: 1})
	h.apply(t, 40)
	late := h.record(t)
	checkLive(t, tt, h, old, seeded, late)
	wantCount(t, tt.metrics.materialisations, 1, "states materialised (the read before the seed)")
	if spans := tt.VersionSpans(); len(spans) != 1 || spans[0].From != seeded {
		t.Errorf("spans %+v, want one from %d", spans, seeded)
	}
}

// TestVersionsReseedAfterGap: batches the versions writer never got end
// its span; the next batch seeds it again from the live state; a read in
// the gap falls back to checkpoints, and every read equals the live state.
func TestVersionsReseedAfterGap(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{CacheSize: 1})
	h.apply(t, 60)
	before := h.record(t)
	h.fsm.SetCommitHook(nil) // these batches are lost to the versions store
	h.apply(t, 10)
	gap := h.record(t)
	h.apply(t, 10)
	h.fsm.SetCommitHook(tt.committed)
	h.apply(t, 30)
	after := h.record(t)
	checkLive(t, tt, h, before, gap, after)
	wantCount(t, tt.metrics.versionsSeeds, 2, "seeds (at open and after the gap)")
	wantCount(t, tt.metrics.materialisations, 1, "states materialised (the read in the gap)")
}

// TestVersionsReseedAfterSwitch: a projection rebuild's switch replaces
// the state outside Apply; the next batch seeds the store again, and
// reads after it equal the live state.
func TestVersionsReseedAfterSwitch(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.apply(t, 50)
	rb := projections.NewRebuilder(h.fsm, projections.RebuilderConfig{})
	defer rb.Close()
	if _, err := rb.Do(context.Background(), projections.JobRebuild, []string{all.Projections()[0].Name()}); err != nil {
		t.Fatal(err)
	}
	h.apply(t, 20)
	i := h.record(t)
	checkLive(t, tt, h, i)
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

// TestVersionsPruned: with VersionsKept, versions older than the kept
// entries go; reads within them are still served by the store and equal
// the live state, and an older read falls back to checkpoints.
func TestVersionsPruned(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{VersionsKept: 40, CacheSize: 1})
	h.apply(t, 30)
	old := h.record(t)
	h.apply(t, 120)
	recent := h.record(t)
	h.apply(t, 10)
	tt.versions.settle() // the prune runs after the batch that triggers it
	checkLive(t, tt, h, old, recent)
	if n := counterValue(t, tt.metrics.versionsPruned); n == 0 {
		t.Error("nothing pruned")
	}
	if spans := tt.VersionSpans(); len(spans) != 1 || spans[0].From <= old || spans[0].From > recent {
		t.Errorf("spans %+v after pruning: want one from between %d and %d", spans, old, recent)
	}
	wantCount(t, tt.metrics.materialisations, 1, "states materialised (the read below the kept entries)")
}
