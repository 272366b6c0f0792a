package scheduler_test

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// BenchmarkCompute1000On5000 computes the plan of a 1,000-allocation
// service job over 5,000 nodes and reports allocations placed per second.
func BenchmarkCompute1000On5000(b *testing.B) {
	st := scheduler.NewMemState()
	for i := range 5000 {
		st.UpsertNode(schedulertest.Node(fmt.Sprintf("node-%05d", i)))
	}
	j := schedulertest.Job("web", events.JobTypeService, 1000)
	st.UpsertJob(j)
	st.SetIndex(10)
	st.Nodes()
	b.ReportAllocs()
	b.ResetTimer()
	placed := 0
	for i := 0; i < b.N; i++ {
		e := &events.Evaluation{ID: fmt.Sprintf("eval-%d", i), Namespace: "default", JobID: "web",
			Type: events.JobTypeService, TriggeredBy: events.EvalTriggerJobRegister}
		p, err := scheduler.Compute(st, e)
		if err != nil {
			b.Fatal(err)
		}
		placed += len(p.Placements)
	}
	if placed != 1000*b.N {
		b.Fatalf("placed %d, want %d", placed, 1000*b.N)
	}
	b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "allocs/s")
}
