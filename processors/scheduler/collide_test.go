package scheduler_test

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// c1mState returns a state of n C1M nodes (4000 MHz, 16 GB) and jobs
// C1M jobs of count allocations of 100 MHz and 64 MB each, with the
// algorithm alg, and the jobs' registration evals.
func c1mState(n, jobs, count int, alg string) (*scheduler.MemState, []*events.Evaluation) {
	st := scheduler.NewMemState()
	st.SetSchedulerAlgorithm(alg)
	for i := range n {
		id := fmt.Sprintf("sim-%05d", i)
		st.UpsertNode(&scheduler.Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default",
			Attributes: map[string]string{"kernel.name": "linux"},
			Resources:  events.NodeResources{CPU: 4000, MemoryMB: 16384, DiskMB: 100000},
			Drivers:    map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}},
			Status:     events.NodeStatusReady, SchedulingEligibility: events.NodeEligible})
	}
	var evals []*events.Evaluation
	for i := range jobs {
		id := fmt.Sprintf("c1m-%03d", i)
		st.UpsertJob(&events.Job{ID: id, Name: id, Namespace: "default", Type: events.JobTypeService, Priority: 50,
			Datacenters: []string{"dc1"}, NodePool: "default", TaskGroups: []events.TaskGroup{{Name: "g", Count: count,
				Tasks: []events.Task{{Name: "t", Driver: "exec", Resources: &events.Resources{CPU: 100, MemoryMB: 64}}}}}})
		evals = append(evals, &events.Evaluation{ID: fmt.Sprintf("eval-%03d", i), Namespace: "default", JobID: id,
			Type: events.JobTypeService, TriggeredBy: events.EvalTriggerJobRegister, Status: events.EvalStatusPending})
	}
	st.SetIndex(1)
	return st, evals
}

// twoWorkers plays evals through two workers as the C1M run does: each
// plan is computed on a state that lacks the plan verified just before
// it (the other worker's, still in raft) and verified against the state
// that holds it; a plan refused in part is computed again once its own
// commit is in the state. It returns the plans verified and how many of
// them were refused in part.
func twoWorkers(t *testing.T, st *scheduler.MemState, evals []*events.Evaluation) (plans, partial int) {
	queue := evals
	var inflight *plan.Result
	commit := func(r *plan.Result) {
		for i := range r.Placements {
			a := r.Placements[i]
			st.UpsertAlloc(&a)
		}
		st.SetIndex(st.Index() + 1)
	}
	for len(queue) > 0 {
		ev := queue[0]
		queue = queue[1:]
		p, err := scheduler.Compute(st, ev)
		if err != nil {
			t.Fatal(err)
		}
		if inflight != nil {
			commit(inflight)
		}
		res := plan.Evaluate(p, st)
		plans++
		if !res.FullCommit() {
			partial++
			// The worker waits for its commit, behind the other's next plan.
			at := min(1, len(queue))
			queue = append(queue[:at], append([]*events.Evaluation{ev}, queue[at:]...)...)
		}
		inflight = &res
	}
	commit(inflight)
	return plans, partial
}

// TestConcurrentPlansRarelyCollide plays a C1M run at a smaller scale
// (2,000 nodes, 40 jobs × 1,000 allocations, the cluster half full at
// the end) through two workers: bin packing plans keep to their own
// groups of nodes (walk.go), so few are refused in part. Walking the
// whole cluster, more than half were (48 of 88).
func TestConcurrentPlansRarelyCollide(t *testing.T) {
	st, evals := c1mState(2000, 40, 1000, scheduler.AlgorithmBinpack)
	plans, partial := twoWorkers(t, st, evals)
	placed := 0
	for _, a := range st.Allocs() {
		if !a.Terminal() {
			placed++
		}
	}
	if placed != 40*1000 {
		t.Fatalf("placed %d, want %d", placed, 40*1000)
	}
	t.Logf("%d plans, %d refused in part", plans, partial)
	if partial*10 > plans {
		t.Fatalf("%d of %d plans refused in part, want at most 10%%", partial, plans)
	}
}

// TestSpreadVisitsEveryNode: with spread a plan still weighs nodes all
// over the cluster, one allocation a node while there are nodes enough.
func TestSpreadVisitsEveryNode(t *testing.T) {
	st, evals := c1mState(2000, 1, 1000, scheduler.AlgorithmSpread)
	p, err := scheduler.Compute(st, evals[0])
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, a := range p.Placements {
		nodes[a.NodeID] = true
	}
	if len(p.Placements) != 1000 || len(nodes) != 1000 {
		t.Fatalf("%d placements on %d nodes, want 1000 on 1000", len(p.Placements), len(nodes))
	}
}
