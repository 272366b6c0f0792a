package fsm_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestSlowBatchSplitsCommit: a batch apply past the slow threshold is
// logged with the Pebble commit's share, and the commit's time has its
// own histogram, so a storage stall shows apart from apply work.
func TestSlowBatchSplitsCommit(t *testing.T) {
	clock := clocktest.NewStepClock(time.Unix(1_700_000_000, 0), 300*time.Millisecond)
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	f, err := fsm.New(pt.OpenStore(t), fsm.Config{Projections: allProjs(), Clock: clock,
		Registerer: reg, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("a")))

	out := logs.String()
	if !strings.Contains(out, "slow fsm batch") || !strings.Contains(out, "commit_took=300ms") {
		t.Fatalf("log: %q", out)
	}
	// The entry itself took 300 ms: it is logged with what it archived.
	if !strings.Contains(out, `msg="slow fsm entry" index=1 took=300ms events=[NamespaceUpserted]`) {
		t.Fatalf("log: %q", out)
	}
	commit := histogram(t, reg, "ordo_fsm_batch_commit_seconds")
	if commit == nil || commit.GetSampleCount() != 1 || commit.GetSampleSum() != 0.3 {
		t.Fatalf("commit histogram: %v", commit)
	}
}

// TestEntryApplyApartFromBatch: the FSM reports the longest single entry
// of a batch apart from the whole batch, so a bench can tell one
// command's work from the batching of many.
func TestEntryApplyApartFromBatch(t *testing.T) {
	clock := clocktest.NewStepClock(time.Unix(1_700_000_000, 0), time.Millisecond)
	reg := prometheus.NewRegistry()
	f, err := fsm.New(pt.OpenStore(t), fsm.Config{Projections: allProjs(), Clock: clock, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pt.Apply(t, f, pt.Log(t, 1, pt.Entry(t, "c1", upsert("a"))), pt.Log(t, 2, pt.Entry(t, "c2", upsert("b"))),
		pt.Log(t, 3, pt.Entry(t, "c3", upsert("c"))))

	// Each clock read moves a millisecond: an entry is read at its start
	// and end; the batch spans its three entries and the commit.
	if got := f.MaxEntryApply(); got != time.Millisecond {
		t.Fatalf("longest entry %v, want 1ms", got)
	}
	if got := f.MaxApply(); got <= 3*time.Millisecond {
		t.Fatalf("longest batch %v, want more than its three entries", got)
	}
	if got := f.MaxEntryApply(); got != 0 {
		t.Fatalf("a second read gave %v: the window did not restart", got)
	}
	entries := histogram(t, reg, "ordo_fsm_entry_apply_seconds")
	if entries == nil || entries.GetSampleCount() != 3 {
		t.Fatalf("entry histogram: %v", entries)
	}
}

// histogram returns the histogram name of reg, nil when absent.
func histogram(t *testing.T, reg *prometheus.Registry, name string) *dto.Histogram {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram()
		}
	}
	return nil
}
