package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// seedCmd is a test command appending its payloads in one entry, standing
// in for the scheduler.
type seedCmd struct{ ps []events.Payload }

func (seedCmd) Validate() error { return nil }
func (s seedCmd) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: s.ps}, nil
}

// startSeededAgent starts a dev agent, appends ps and returns its address.
func startSeededAgent(t *testing.T, ps ...events.Payload) string {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.Scheduler.Disabled = true // the test checks state before any scheduling
	cfg.DataDir, cfg.HTTPAddr, cfg.RaftAddr = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout, cfg.NoSync = 100*time.Millisecond, true
	cfg.Logger, cfg.RaftLogOutput = slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, wake := a.FSM().Notifier().Applied()
		snap := a.Store().Snapshot()
		_, err := namespaces.Get(projections.NewView(snap), namespaces.Default)
		snap.Close()
		if err == nil && a.Node().IsLeader() {
			break
		}
		select {
		case <-wake:
		case <-time.After(time.Until(deadline)):
			t.Fatal("agent never bootstrapped")
		}
	}
	for _, p := range ps {
		if _, err := a.Pipeline().Run(context.Background(), "test.seed", commands.Request{}, seedCmd{[]events.Payload{p}}); err != nil {
			t.Fatal(err)
		}
	}
	return "http://" + a.HTTPAddr()
}

func TestEvalAllocDeploymentCommands(t *testing.T) {
	ev := func(id, status string) events.Evaluation {
		return events.Evaluation{ID: id, Namespace: "default", Priority: 50, Type: "service", TriggeredBy: "job-register",
			JobID: "web", Status: status, QueuedAllocations: map[string]int{"web": 1}}
	}
	first, second := ev("eval-zz-1", "complete"), ev("eval-aa-2", "blocked")
	first.BlockedEval, second.PreviousEval = second.ID, first.ID
	addr := startSeededAgent(t,
		&events.EvalsUpserted{Evals: []events.Evaluation{first}},
		&events.EvalsUpserted{Evals: []events.Evaluation{second}},
		&events.AllocsPlaced{EvalID: first.ID, Allocs: []events.Allocation{{ID: "alloc-0001", Namespace: "default", EvalID: first.ID,
			Name: "web.web[0]", NodeID: "node-1", JobID: "web", TaskGroup: "web", DesiredStatus: "run", ClientStatus: "running",
			Resources:  events.Resources{CPU: 100, MemoryMB: 64},
			TaskStates: map[string]*events.TaskState{"server": {State: "running"}}}}},
		&events.DeploymentUpserted{Deployment: events.Deployment{ID: "dep-0001", Namespace: "default", JobID: "web",
			Status: "running", StatusDescription: "Deployment is running",
			TaskGroups: map[string]*events.DeploymentState{"web": {DesiredTotal: 1, PlacedAllocs: 1}}}},
	)

	code, stdout, stderr := runCLI("eval", "list", "-address", addr)
	if code != 0 || strings.Index(stdout, "eval-zz-1") > strings.Index(stdout, "eval-aa-2") || !strings.HasPrefix(stdout, "ID  ") {
		t.Fatalf("eval list (oldest first): %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = runCLI("eval", "status", "-related", "-verbose", "-address", addr, "eval-aa")
	for _, want := range []string{"ID                 = eval-aa-2", "Previous Eval      = eval-zz-1", "Related Evaluations", "eval-zz-1  50", "Queued Allocations\nweb = 1"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Fatalf("eval status -related: %d %q\n%s\nmissing %q", code, stderr, stdout, want)
		}
	}
	if code, stdout, _ = runCLI("eval", "status", "-json", "-address", addr, "eval-zz-1"); code != 0 || !strings.Contains(stdout, `"BlockedEval": "eval-aa-2"`) {
		t.Fatalf("eval status -json: %d\n%s", code, stdout)
	}

	code, stdout, stderr = runCLI("alloc", "status", "-verbose", "-address", addr, "alloc-0")
	for _, want := range []string{"ID                  = alloc-0001", "Desired Status      = run", "No Shutdown Delay   = <none>", "server  running"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Fatalf("alloc status: %d %q\n%s\nmissing %q", code, stderr, stdout, want)
		}
	}
	code, stdout, stderr = runCLI("alloc", "stop", "-no-shutdown-delay", "-address", addr, "alloc-0")
	if code != 0 || !strings.HasPrefix(stdout, `Allocation "alloc-0001" stopped; evaluation "`) {
		t.Fatalf("alloc stop: %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, _ = runCLI("alloc", "status", "-address", addr, "alloc-0001")
	if code != 0 || !strings.Contains(stdout, "Desired Status      = stop") || !strings.Contains(stdout, "No Shutdown Delay   = true") {
		t.Fatalf("alloc status after stop:\n%s", stdout)
	}
	if code, _, stderr = runCLI("alloc", "status", "-address", addr, "missing"); code != 1 || !strings.Contains(stderr, `"missing" not found`) {
		t.Fatalf("alloc status of a missing alloc: %d %q", code, stderr)
	}

	code, stdout, _ = runCLI("deployment", "list", "-address", addr)
	if code != 0 || !strings.Contains(stdout, "dep-0001  web     0            running") {
		t.Fatalf("deployment list: %d\n%s", code, stdout)
	}
	code, stdout, _ = runCLI("deployment", "status", "-address", addr, "dep-0")
	if code != 0 || !strings.Contains(stdout, "Status       = running") || !strings.Contains(stdout, "web         false     0") {
		t.Fatalf("deployment status: %d\n%s", code, stdout)
	}
}
