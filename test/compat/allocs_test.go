package compat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// placed is a test-only command appending the payloads it holds in one
// entry, standing in for the scheduler and plan applier.
type placed struct{ ps []events.Payload }

func (placed) Validate() error { return nil }
func (p placed) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: p.ps}, nil
}

func seedEntry(t *testing.T, a *agent.Agent, ps ...events.Payload) uint64 {
	t.Helper()
	out, err := a.Pipeline().Run(context.Background(), "test.seed", commands.Request{}, placed{ps})
	if err != nil {
		t.Fatal(err)
	}
	return out.Index
}

// TestEvalsAllocsDeploymentsWithNomadClient reads evaluations, allocations
// and deployments, stops an allocation and waits on a blocking query with
// the nomad/api Go client.
func TestEvalsAllocsDeploymentsWithNomadClient(t *testing.T) {
	a, c := startDev(t)
	now := time.Now().UnixNano()
	ev := func(id, status string) events.Evaluation {
		return events.Evaluation{ID: id, Namespace: "default", Priority: 50, Type: "service",
			TriggeredBy: events.EvalTriggerJobRegister, JobID: "web", Status: status, CreateTime: now, ModifyTime: now}
	}
	first, second := ev("7f1c2a3b-eval-0001", events.EvalStatusComplete), ev("0a9b8c7d-eval-0002", events.EvalStatusBlocked)
	first.BlockedEval, second.PreviousEval = second.ID, first.ID
	second.WaitUntil = now + int64(time.Minute)
	al := func(id, node string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", EvalID: first.ID, Name: "web.web[0]", NodeID: node,
			NodeName: "client-1", JobID: "web", TaskGroup: "web", Resources: events.Resources{CPU: 250, MemoryMB: 128},
			DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning, CreateTime: now, ModifyTime: now,
			TaskStates:       map[string]*events.TaskState{"server": {State: "running", StartedAt: now}},
			DeploymentID:     "5e6f7a8b-dep-0001",
			DeploymentStatus: &events.AllocDeploymentStatus{Canary: true, Timestamp: now}}
	}
	seedEntry(t, a, &events.EvalsUpserted{Evals: []events.Evaluation{first}})
	seedEntry(t, a, &events.EvalsUpserted{Evals: []events.Evaluation{second}})
	seedEntry(t, a, &events.AllocsPlaced{EvalID: first.ID, Allocs: []events.Allocation{al("c3d4e5f6-alloc-1", "node-1"), al("1a2b3c4d-alloc-2", "node-1")}})
	seedEntry(t, a, &events.DeploymentUpserted{Deployment: events.Deployment{ID: "5e6f7a8b-dep-0001", Namespace: "default", JobID: "web",
		Status: events.DeploymentStatusRunning, TaskGroups: map[string]*events.DeploymentState{"web": {DesiredCanaries: 1, DesiredTotal: 2,
			PlacedCanaries: []string{"c3d4e5f6-alloc-1"}, RequireProgressBy: now + int64(10*time.Minute)}}, CreateTime: now}})

	// Evaluations.
	evs, qm, err := c.Evaluations().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || qm.LastIndex == 0 {
		t.Fatalf("List = %d evals (%+v)", len(evs), qm)
	}
	info, _, err := c.Evaluations().Info(second.ID, nil) // the client asks related=true
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != events.EvalStatusBlocked || info.PreviousEval != first.ID || info.WaitUntil.UnixNano() != second.WaitUntil ||
		len(info.RelatedEvals) != 1 || info.RelatedEvals[0].ID != first.ID || info.RelatedEvals[0].BlockedEval != second.ID {
		t.Fatalf("Info = %+v (related %+v)", info, info.RelatedEvals)
	}
	if l, _, err := c.Evaluations().PrefixList("7f1c"); err != nil || len(l) != 1 || l[0].ID != first.ID {
		t.Fatalf("PrefixList = %v, %v", l, err)
	}
	stubs, _, err := c.Evaluations().Allocations(first.ID, nil)
	if err != nil || len(stubs) != 2 {
		t.Fatalf("eval Allocations = %v, %v", stubs, err)
	}
	// Paging: the client follows X-Nomad-NextToken through QueryMeta.
	page, qm, err := c.Evaluations().List(&api.QueryOptions{PerPage: 1})
	if err != nil || len(page) != 1 || page[0].ID != first.ID || qm.NextToken == "" {
		t.Fatalf("first page = %v, %+v, %v", page, qm, err)
	}
	page, qm, err = c.Evaluations().List(&api.QueryOptions{PerPage: 1, NextToken: qm.NextToken})
	if err != nil || len(page) != 1 || page[0].ID != second.ID || qm.NextToken != "" {
		t.Fatalf("second page = %v, %+v, %v", page, qm, err)
	}
	if _, _, err := c.Evaluations().List(&api.QueryOptions{Filter: `Status ==`}); err == nil || !strings.Contains(err.Error(), "filter") {
		t.Fatalf("a bad filter answered %v", err)
	}
	blocked, _, err := c.Evaluations().List(&api.QueryOptions{Filter: `Status == "blocked"`, Reverse: true})
	if err != nil || len(blocked) != 1 || blocked[0].ID != second.ID {
		t.Fatalf("filtered = %v, %v", blocked, err)
	}

	// Allocations.
	list, qm, err := c.Allocations().List(nil)
	if err != nil || len(list) != 2 {
		t.Fatalf("Allocations List = %v, %v", list, err)
	}
	alloc, _, err := c.Allocations().Info("c3d4e5f6-alloc-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if alloc.NodeID != "node-1" || alloc.ClientStatus != events.AllocClientRunning || alloc.TaskStates["server"].StartedAt.UnixNano() != now ||
		alloc.DeploymentStatus == nil || !alloc.DeploymentStatus.Canary || *alloc.Resources.CPU != 250 || alloc.CreateIndex == 0 {
		t.Fatalf("Allocation Info = %+v", alloc)
	}

	// A blocking List wakes on the stop, which records no shutdown delay (N23).
	woke := make(chan uint64, 1)
	go func() {
		_, qm, err := c.Allocations().List(&api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 10 * time.Second})
		if err != nil {
			woke <- 0
			return
		}
		woke <- qm.LastIndex
	}()
	stop, err := c.Allocations().Stop(alloc, &api.QueryOptions{Params: map[string]string{"no_shutdown_delay": "true"}})
	if err != nil || stop.EvalID == "" || stop.LastIndex == 0 {
		t.Fatalf("Stop = %+v, %v", stop, err)
	}
	select {
	case idx := <-woke:
		if idx < stop.LastIndex {
			t.Fatalf("blocking List woke at %d, want >= %d", idx, stop.LastIndex)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("blocking List never woke")
	}
	alloc, _, err = c.Allocations().Info(alloc.ID, nil)
	if err != nil || alloc.DesiredStatus != events.AllocDesiredStop || alloc.DesiredTransition.NoShutdownDelay == nil || !*alloc.DesiredTransition.NoShutdownDelay {
		t.Fatalf("stopped alloc = %+v, %v", alloc, err)
	}
	if e, _, err := c.Evaluations().Info(stop.EvalID, nil); err != nil || e.TriggeredBy != events.EvalTriggerAllocStop {
		t.Fatalf("stop eval = %+v, %v", e, err)
	}
	if nodeAllocs, _, err := c.Nodes().Allocations("node-1", nil); err != nil || len(nodeAllocs) != 2 {
		t.Fatalf("node Allocations = %v, %v", nodeAllocs, err)
	}

	// Deployments.
	deps, _, err := c.Deployments().List(nil)
	if err != nil || len(deps) != 1 || deps[0].TaskGroups["web"].DesiredCanaries != 1 ||
		deps[0].TaskGroups["web"].RequireProgressBy.UnixNano() != now+int64(10*time.Minute) {
		t.Fatalf("Deployments List = %+v, %v", deps, err)
	}
	// Its canary never reported healthy (and was stopped with its job
	// missing): no promotion. test/compat/deploy_test.go promotes.
	if pr, _, err := c.Deployments().PromoteAll(deps[0].ID, nil); err == nil || !strings.Contains(err.Error(), "not all canaries are healthy") {
		t.Fatalf("PromoteAll = %+v, %v", pr, err)
	}
	dep, _, err := c.Deployments().Info(deps[0].ID, nil)
	if err != nil || dep.TaskGroups["web"].Promoted {
		t.Fatalf("deployment = %+v, %v", dep, err)
	}
	if _, _, err := c.Deployments().Pause(dep.ID, true, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Deployments().Fail(dep.ID, nil); err != nil {
		t.Fatal(err)
	}
	if dep, _, err = c.Deployments().Info(dep.ID, nil); err != nil || dep.Status != events.DeploymentStatusFailed {
		t.Fatalf("failed deployment = %+v, %v", dep, err)
	}
}
