package timetravel

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
)

// TestBackfillOnExistingHistory: a versions store created on a server
// that already has history is seeded at the applied index and backfilled
// from the archive: afterwards one span covers every index since the
// first, and a read at every sampled index equals the live state there
// (and a replay of the archive to it).
func TestBackfillOnExistingHistory(t *testing.T) {
	h := newHistory(t)
	var sampled []uint64
	for range 8 {
		h.applyIn(t, 40, 6)
		sampled = append(sampled, h.record(t))
		h.apply(t, 1)
		sampled = append(sampled, h.record(t))
	}
	seeded := h.fsm.Applied()
	tt := newTT(t, h, Options{})
	h.applyIn(t, 30, 4)
	sampled = append(sampled, h.record(t))
	backfilled(t, tt, 1)
	for _, i := range sampled {
		got := checksumsAt(t, tt, i)
		if !reflect.DeepEqual(got, h.sums[i]) {
			t.Errorf("At(%d) differs from the live state", i)
		}
		if want := fromEmpty(t, h, i); !reflect.DeepEqual(got, want) {
			t.Errorf("At(%d) differs from a replay from empty", i)
		}
	}
	for i := uint64(1); i <= seeded; i += 11 {
		if got, want := checksumsAt(t, tt, i), fromEmpty(t, h, i); !reflect.DeepEqual(got, want) {
			t.Fatalf("At(%d) differs from a replay to %d", i, i)
		}
	}
	wantCount(t, tt.metrics.backfills, 1, "backfills")
	if n := counterValue(t, tt.metrics.backfillEvents); n == 0 {
		t.Error("no event replayed by the backfill")
	}
	if st := tt.Status(); st.Versions == nil || st.Versions.Oldest != 1 || st.Versions.Backfill != nil {
		t.Errorf("status after the backfill: %+v", st.Versions)
	}
}

// TestReadsDuringBackfill: until the backfill has reached and ended, a
// read below the seeded index is refused with a retryable error that
// says the history is being indexed and how far it is; reads from the
// seed on are served all along.
func TestReadsDuringBackfill(t *testing.T) {
	h := newHistory(t)
	h.applyIn(t, 200, 5)
	early := h.record(t) - 100
	h.sums[early] = fromEmpty(t, h, early)
	seeded := h.record(t)
	tt := openTT(t, h, Options{}) // no Run: the backfill is only due
	tt.versions.settle()
	refused := func(want string) {
		t.Helper()
		_, err := tt.At(context.Background(), early)
		var ns *NotServedError
		if !errors.As(err, &ns) || !ns.Retryable() || ns.Index != early || !strings.Contains(err.Error(), want) {
			t.Fatalf("At(%d) during the backfill = %v, want a retryable refusal saying %q", early, err, want)
		}
	}
	refused("being indexed: a backfill from the archive is due")
	checkLive(t, tt, h, seeded)

	k := tt.versions
	run, err := k.nextFill(context.Background())
	if err != nil || run == nil {
		t.Fatalf("nextFill = %v, %v", run, err)
	}
	if b := tt.Status().Versions.Backfill; b == nil || b.From != 1 || b.To != seeded-1 {
		t.Fatalf("status of the backfill under way: %+v", b)
	}
	refused("the backfill of indexes 1 to")
	checkLive(t, tt, h, seeded)
	if err := k.fill(run); err != nil {
		t.Fatal(err)
	}
	close(run.done)
	k.running.CompareAndSwap(run, nil)
	checkLive(t, tt, h, early, seeded)
}

// TestVersionsPruned: with VersionsKept, versions older than the kept
// entries go; reads within them are still served and equal the live
// state, and an older read is refused for good, naming the oldest index
// served.
func TestVersionsPruned(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{VersionsKept: 40})
	h.apply(t, 30)
	old := h.record(t)
	h.apply(t, 120)
	recent := h.record(t)
	h.apply(t, 10)
	tt.versions.settle() // the prune runs after the batch that triggers it
	checkLive(t, tt, h, recent)
	if n := counterValue(t, tt.metrics.versionsPruned); n == 0 {
		t.Error("nothing pruned")
	}
	spans := tt.VersionSpans()
	if len(spans) != 1 || spans[0].From <= old || spans[0].From > recent {
		t.Fatalf("spans %+v after pruning: want one from between %d and %d", spans, old, recent)
	}
	_, err := tt.At(context.Background(), old)
	var ns *NotServedError
	if !errors.As(err, &ns) || ns.Retryable() || ns.Oldest != spans[0].From ||
		!strings.Contains(err.Error(), "versions_kept") {
		t.Fatalf("At(%d) below the kept entries = %v, want a refusal naming the oldest index %d", old, err, spans[0].From)
	}
}

// TestBackfillWithVersionsKept: a store created late with VersionsKept
// is backfilled no further down than it keeps.
func TestBackfillWithVersionsKept(t *testing.T) {
	h := newHistory(t)
	h.apply(t, 100)
	tt := newTT(t, h, Options{VersionsKept: 500})
	h.apply(t, 20)
	i := h.record(t) - 60
	h.sums[i] = fromEmpty(t, h, i)
	backfilled(t, tt, 1)
	checkLive(t, tt, h, i)
}

// TestBackfillEqualsStoreFedLive: a store backfilled from the archive
// reads, key for key (rows, table indexes, projection metadata), what a
// store fed every commit from the log's start reads, at every index.
func TestBackfillEqualsStoreFedLive(t *testing.T) {
	h := newHistory(t)
	fed, err := New(Config{DataDir: t.TempDir(), FSM: h.fsm, Projections: all.Projections(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fed.Close)
	h.applyIn(t, 90, 6)
	late := newTT(t, h, Options{})
	fedHook, lateHook := fed.CommitHook(), late.CommitHook()
	h.fsm.SetCommitHook(func(c fsm.Commit) { fedHook(c); lateHook(c) })
	h.applyIn(t, 30, 4)
	fed.versions.settle()
	backfilled(t, late, 1)
	dump := func(tt *TimeTravel, i uint64) map[string]string {
		t.Helper()
		st, err := tt.At(context.Background(), i)
		if err != nil {
			t.Fatalf("At(%d): %v", i, err)
		}
		out := map[string]string{}
		for _, p := range projections.StatePrefixes() {
			err := st.reader.Scan(p, kv.PrefixEnd(p), false, func(k, v []byte) error {
				out[string(k)] = string(v)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	for i := uint64(1); i <= h.fsm.Applied(); i++ {
		want, got := dump(fed, i), dump(late, i)
		delete(want, string(appliedKey)) // each batch writes its own
		delete(got, string(appliedKey))
		if !reflect.DeepEqual(got, want) {
			for k, v := range want {
				if got[k] != v {
					t.Errorf("At(%d): %q = %q backfilled, %q fed live", i, k, got[k], v)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("At(%d): %q only backfilled", i, k)
				}
			}
			t.FailNow()
		}
	}
}
