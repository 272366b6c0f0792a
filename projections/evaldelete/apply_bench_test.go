package evaldelete_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/evaldelete"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

const pageSize = evaldelete.DefaultPageSize

// archivedPage returns the EvalsPageDeleted the entry at index archived.
func archivedPage(tb testing.TB, r kv.Reader, index uint64) *events.EvalsPageDeleted {
	tb.Helper()
	b, err := r.Get(archive.Key(index, 0))
	if err != nil {
		tb.Fatal(err)
	}
	ev, err := events.DecodeEvent(b)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := events.Decode(ev)
	if err != nil {
		tb.Fatal(err)
	}
	return p.(*events.EvalsPageDeleted)
}

// gcCycles returns the Go GC cycles completed so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// commitSeconds returns the FSM's ordo_fsm_batch_commit_seconds sum.
func commitSeconds(tb testing.TB, reg *prometheus.Registry) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "ordo_fsm_batch_commit_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleSum()
		}
	}
	return 0
}

// BenchmarkDeleteAll seeds n pending evals through the FSM and deletes them
// all by filter, one page entry at a time as the handler does, resuming at
// each page's Next: it reports the time per eval and the longest page
// apply, which must not grow with the table (run with -benchtime=1x).
func BenchmarkDeleteAll(b *testing.B) {
	for _, n := range []int{20000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				store := pt.OpenStore(b)
				reg := prometheus.NewRegistry()
				f, err := fsm.New(store, fsm.Config{Projections: all.Projections(), Registerer: reg,
					Clock: clock.System{}, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				idx := uint64(1)
				for i := 0; i < n; i += 1000 {
					batch := make([]events.Evaluation, 0, 1000)
					for j := i; j < i+1000; j++ {
						batch = append(batch, eval(fmt.Sprintf("e%08d", j), fmt.Sprint("job", j%50), events.EvalStatusPending))
					}
					pt.ApplyOne(b, f, idx, pt.Entry(b, "", &events.EvalsUpserted{Evals: batch}))
					idx++
				}
				b.StartTimer()
				from, deleted := "", 0
				var longest time.Duration
				var took []time.Duration
				// Labelled so that a -cpuprofile can be cut to the delete
				// (pprof -tagfocus phase=delete).
				pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("phase", "delete")))
				commitStart := commitSeconds(b, reg)
				var longestCommit time.Duration
				for {
					gc0, commit0 := gcCycles(), commitSeconds(b, reg)
					t0 := time.Now()
					res := pt.ApplyOne(b, f, idx, pt.Entry(b, "", &events.EvalsPageDeleted{Filter: `Status == "pending"`, From: from,
						PageSize: pageSize, ScanLimit: pageSize * 4}))
					d := time.Since(t0)
					longest = max(longest, d)
					took = append(took, d)
					commit := time.Duration((commitSeconds(b, reg) - commit0) * 1e9)
					longestCommit = max(longestCommit, commit)
					if d > 20*time.Millisecond {
						h := store.Health()
						b.Logf("slow page at %d: %s, commit %s, gc cycles %d, memtables %d flushing %d L0 files %d",
							idx, d, commit, gcCycles()-gc0, h.MemTables, h.Flushing, h.L0Files)
					}
					if res.Err != nil {
						b.Fatal(res.Err)
					}
					p := archivedPage(b, store, idx)
					idx++
					deleted += len(p.IDs)
					if from = p.Next; from == "" {
						break
					}
				}
				pprof.SetGoroutineLabels(context.Background())
				if deleted != n {
					b.Fatalf("deleted %d of %d", deleted, n)
				}
				slices.Sort(took)
				b.ReportMetric(float64(longest.Microseconds())/1000, "ms-longest-apply")
				b.ReportMetric(float64(longestCommit.Microseconds())/1000, "ms-longest-commit")
				b.ReportMetric((commitSeconds(b, reg)-commitStart)*1000, "ms-commits")
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-p50-apply")
				b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "ms-p99-apply")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/eval")
		})
	}
}
