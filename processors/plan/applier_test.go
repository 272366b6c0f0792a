package plan_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/eval"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/test/testagent"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// startApplier starts an agent without its own scheduler and an Applier
// over it, with nodes registered ready, each with cpu MHz.
func startApplier(t *testing.T, cpu int, nodeIDs ...string) (*agent.Agent, *plan.Applier) {
	t.Helper()
	return startApplierWith(t, nil, cpu, nodeIDs...)
}

// startApplierWith is startApplier with the Applier's metrics in reg.
func startApplierWith(t *testing.T, reg prometheus.Registerer, cpu int, nodeIDs ...string) (*agent.Agent, *plan.Applier) {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Logger = testagent.Discard()
	cfg.RaftLogOutput = io.Discard
	cfg.Scheduler.Disabled = true
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	testagent.WaitFor(t, 10*time.Second, "leadership", a.Node().IsLeader)
	ctx := context.Background()
	for _, id := range nodeIDs {
		n := events.Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default",
			Resources: events.NodeResources{CPU: cpu, MemoryMB: 4096, DiskMB: 1000},
			Drivers:   map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}}
		if _, err := a.Pipeline().Run(ctx, "node.register", commands.Request{}, node.Register{Node: n}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Pipeline().Run(ctx, "node.status", commands.Request{}, node.UpdateStatus{ID: id, Status: events.NodeStatusReady}); err != nil {
			t.Fatal(err)
		}
	}
	ap, err := plan.New(plan.Config{Pipeline: a.Pipeline(), Registerer: reg,
		States: &schedstate.Source{Store: a.Store(), Notifier: a.FSM().Notifier()}, Logger: testagent.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ap.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	return a, ap
}

// withEvals stores a pending eval for each id: a plan commits only for an
// eval that exists.
func withEvals(t *testing.T, a *agent.Agent, ids ...string) {
	t.Helper()
	var evs []events.Evaluation
	for _, id := range ids {
		evs = append(evs, events.Evaluation{ID: id, Namespace: "default", JobID: "j-" + id, Priority: 50,
			Type: events.JobTypeService, TriggeredBy: events.EvalTriggerJobRegister, Status: events.EvalStatusPending})
	}
	if _, err := a.Pipeline().Run(context.Background(), "eval.update", commands.Request{}, eval.Update{Evals: evs}); err != nil {
		t.Fatal(err)
	}
}

// onePlacement is a plan of eval id placing one alloc of cpu MHz on nodeID.
func onePlacement(id, nodeID string, cpu int) *scheduler.Plan {
	return &scheduler.Plan{EvalID: id, Namespace: "default", JobID: "j-" + id,
		Placements: []events.Allocation{{ID: "alloc-" + id, Namespace: "default", JobID: "j-" + id,
			TaskGroup: "g", Name: "j-" + id + ".g[0]", NodeID: nodeID, DesiredStatus: events.AllocDesiredRun,
			ClientStatus: events.AllocClientPending, Resources: events.Resources{CPU: cpu, MemoryMB: 10}}}}
}

// TestConcurrentPlansNeverOvercommit: many plans racing for one node,
// verified while earlier ones are still in raft (the pipelined applier),
// commit no more than the node holds; the refused ones are told to refresh
// past a commit that holds what filled the node.
func TestConcurrentPlansNeverOvercommit(t *testing.T) {
	const capacity, plans = 5, 24
	a, ap := startApplier(t, capacity*100, "n1")
	for i := range plans {
		withEvals(t, a, fmt.Sprintf("e%02d", i))
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		placed   int
		refusals []uint64
	)
	for i := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, index, err := ap.Submit(context.Background(), onePlacement(fmt.Sprintf("e%02d", i), "n1", 100), nil)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			placed += len(res.Placements)
			if len(res.Placements) == 0 {
				if res.RefreshIndex == 0 || index == 0 {
					t.Errorf("plan %d refused without a refresh index", i)
				}
				refusals = append(refusals, res.RefreshIndex)
			}
		}()
	}
	wg.Wait()
	if placed != capacity {
		t.Fatalf("applier committed %d placements on a node with room for %d", placed, capacity)
	}
	snap := a.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	list, err := allocs.ByNode(v, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != capacity {
		t.Fatalf("node holds %d allocations, want %d", len(list), capacity)
	}
	var newest uint64
	for _, al := range list {
		newest = max(newest, al.CreateIndex)
	}
	for _, r := range refusals {
		if r < newest {
			t.Errorf("refused plan told to refresh at %d, before the commit at %d that filled the node", r, newest)
		}
	}
}

// TestPipelinedPlansOnDifferentNodesAllCommit: the overlay of an in-flight
// plan does not refuse plans for other nodes.
func TestPipelinedPlansOnDifferentNodesAllCommit(t *testing.T) {
	ids := []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"}
	a, ap := startApplier(t, 100, ids...)
	for i := range ids {
		withEvals(t, a, fmt.Sprintf("e%d", i))
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _, err := ap.Submit(context.Background(), onePlacement(fmt.Sprintf("e%d", i), id, 100), nil)
			if err != nil {
				t.Error(err)
				return
			}
			if len(res.Placements) != 1 || !res.FullCommit() {
				t.Errorf("plan for %s: %d placements, rejected %v", id, len(res.Placements), res.RejectedNodes)
			}
		}()
	}
	wg.Wait()
}

// TestPlanForDeletedEvalIsRefused: an eval deleted while a worker planned
// it (eval delete and GC do not pause the broker) has its plan refused at
// apply: nothing is placed, the eval is not written back, and the worker
// is told (plan.ErrEvalDeleted) so it drops the eval.
func TestPlanForDeletedEvalIsRefused(t *testing.T) {
	a, ap := startApplier(t, 1000, "n1")
	withEvals(t, a, "gone")
	if _, err := a.Pipeline().Run(context.Background(), "eval.delete", commands.Request{}, eval.Delete{IDs: []string{"gone"}}); err != nil {
		t.Fatal(err)
	}
	done := events.Evaluation{ID: "gone", Namespace: "default", JobID: "j-gone", Priority: 50, Type: events.JobTypeService,
		TriggeredBy: events.EvalTriggerJobRegister, Status: events.EvalStatusComplete}
	_, _, err := ap.Submit(context.Background(), onePlacement("gone", "n1", 100), []events.Evaluation{done})
	if !errors.Is(err, plan.ErrEvalDeleted) {
		t.Fatalf("Submit = %v, want ErrEvalDeleted", err)
	}
	snap := a.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	if list, err := allocs.ByNode(v, "n1"); err != nil || len(list) != 0 {
		t.Fatalf("node holds %d allocations (%v), want none", len(list), err)
	}
	if _, err := evals.Get(v, "gone"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("deleted eval after the refused plan: %v, want not found", err)
	}
}

// A plan placing an allocation that is on one node on another is refused
// there, end to end: nothing moves, the worker is told to refresh, and
// the refusal is counted (it is a scheduler bug).
func TestPlanMovingAnAllocationIsRefused(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, ap := startApplierWith(t, reg, 1000, "n1", "n2")
	withEvals(t, a, "e1", "e2")
	if res, _, err := ap.Submit(context.Background(), onePlacement("e1", "n1", 100), nil); err != nil || !res.FullCommit() {
		t.Fatalf("first plan: %+v, %v", res, err)
	}
	move := onePlacement("e2", "n2", 100)
	move.Placements[0].ID = "alloc-e1"
	res, _, err := ap.Submit(context.Background(), move, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reasons["n2"] != plan.ReasonAllocElsewhere || res.RefreshIndex == 0 {
		t.Fatalf("result %+v, want n2 refused (%s) and a refresh", res, plan.ReasonAllocElsewhere)
	}
	snap := a.Store().Snapshot()
	defer snap.Close()
	if al, err := allocs.Get(projections.NewView(snap), "alloc-e1"); err != nil || al.NodeID != "n1" {
		t.Fatalf("alloc-e1: %+v, %v; want it left on n1", al, err)
	}
	const want = `
# HELP ordo_plan_alloc_moves_refused_total Nodes refused a plan's part because it would move an allocation there from another node (a scheduler bug).
# TYPE ordo_plan_alloc_moves_refused_total counter
ordo_plan_alloc_moves_refused_total 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ordo_plan_alloc_moves_refused_total"); err != nil {
		t.Fatal(err)
	}
}
