package rebuild_test

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// BenchmarkFSMApply measures entries/s through FSM.Apply: single-event
// namespace upsert entries with unique command ids, in raft batches of 64.
func BenchmarkFSMApply(b *testing.B) {
	const batch = 64
	store := pt.OpenStore(b)
	f := pt.NewFSM(b, store)
	meta := map[string]string{"owner": "team", "tier": "1"}
	var index uint64
	logs := make([]raftlog.Log, batch)
	entries := 0
	for b.Loop() {
		b.StopTimer()
		for i := range logs {
			index++
			e := pt.Entry(b, fmt.Sprint("cmd-", index), &events.NamespaceUpserted{Namespace: events.Namespace{
				Name: fmt.Sprint("ns-", index%1000), Description: "benchmark", Meta: meta}})
			logs[i] = pt.Log(b, index, e)
		}
		b.StartTimer()
		for _, r := range f.Apply(logs) {
			if res := r.(fsm.Result); res.Err != nil || res.Duplicate {
				b.Fatalf("result %+v", res)
			}
		}
		entries += batch
	}
	b.ReportMetric(float64(entries)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkRebuild measures events/s replayed from an archive of 100k
// events (namespace upserts and deletes over 10k names, one event per
// entry) into fresh projections.
func BenchmarkRebuild(b *testing.B) {
	const n = 100_000
	src := pt.OpenStore(b)
	w := src.Batch()
	for i := uint64(1); i <= n; i++ {
		name := fmt.Sprint("ns-", i%10_000)
		var p events.Payload = &events.NamespaceUpserted{Namespace: events.Namespace{
			Name: name, Description: "benchmark", Meta: map[string]string{"i": fmt.Sprint(i)}}}
		if i%5 == 0 {
			p = &events.NamespaceDeleted{Name: name}
		}
		e := pt.Entry(b, fmt.Sprint("cmd-", i), p)
		e.Stamp(i)
		data, err := events.EncodeEvent(&e.Events[0])
		if err != nil {
			b.Fatal(err)
		}
		if err := archive.Append(w, i, 0, data); err != nil {
			b.Fatal(err)
		}
		if i%10_000 == 0 || i == n {
			if err := archive.SetCounters(w, i, i); err != nil {
				b.Fatal(err)
			}
			if err := w.Commit(); err != nil {
				b.Fatal(err)
			}
			w = src.Batch()
		}
	}
	w.Close()
	replayed := uint64(0)
	for b.Loop() {
		b.StopTimer()
		dst, err := kv.Open(b.TempDir(), kv.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := rebuild.Rebuild(src, dst, allProjs(), 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if st.Events != n {
			b.Fatalf("replayed %d events, want %d", st.Events, n)
		}
		replayed += st.Events
		dst.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(replayed)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkFSMApplyPlan measures allocations/s through FSM.Apply of plan
// commits: one entry per plan placing 1000 allocations of one job, signed
// by one key, each on its own node of 5000, as a spread plan commits them.
func BenchmarkFSMApplyPlan(b *testing.B) { benchFSMApplyPlan(b, 1) }

// BenchmarkFSMApplyPlanPacked is BenchmarkFSMApplyPlan with 25
// allocations a node, as a bin packing plan of the C1M run commits them
// (processors/scheduler/walk.go).
func BenchmarkFSMApplyPlanPacked(b *testing.B) { benchFSMApplyPlan(b, 25) }

// benchFSMApplyPlan commits plans of 1000 allocations, pack to a node.
func benchFSMApplyPlan(b *testing.B, pack int) {
	const perPlan, nodes = 1000, 5000
	store := pt.OpenStore(b)
	f := pt.NewFSM(b, store)
	var index uint64
	placed := 0
	for b.Loop() {
		b.StopTimer()
		index++
		job := fmt.Sprint("job-", index)
		allocs := make([]events.Allocation, perPlan)
		for i := range allocs {
			allocs[i] = events.Allocation{ID: fmt.Sprintf("%s-%04d", job, i), Namespace: "default", JobID: job,
				TaskGroup: "g", Name: fmt.Sprintf("%s.g[%d]", job, i), NodeID: fmt.Sprintf("node-%05d", (int(index)*perPlan/pack+i/pack)%nodes),
				EvalID: "eval-" + job, DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending,
				Resources: events.Resources{CPU: 100, MemoryMB: 64}, SigningKeyID: "key-1"}
		}
		e := pt.Entry(b, "", &events.AllocsPlaced{EvalID: "eval-" + job, Allocs: allocs})
		logs := []raftlog.Log{pt.Log(b, index, e)}
		b.StartTimer()
		for _, r := range f.Apply(logs) {
			if res := r.(fsm.Result); res.Err != nil || res.Duplicate {
				b.Fatalf("result %+v", res)
			}
		}
		placed += perPlan
	}
	b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "allocs/s")
}
