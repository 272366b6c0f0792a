package main

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// TestDeploymentStatusVerboseListsAllocations: with -verbose, as Nomad's,
// `deployment status` lists the allocations placed under the deployment
// (and only those); without it, none.
func TestDeploymentStatusVerboseListsAllocations(t *testing.T) {
	alloc := func(id, dep string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", EvalID: "e", Name: "web.web[0]", NodeID: "n1", JobID: "web",
			TaskGroup: "web", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning, DeploymentID: dep}
	}
	addr := startSeededAgent(t,
		&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{alloc("alloc-of-dep-1", "dep-1"), alloc("alloc-of-dep-0", "dep-0")}},
		&events.DeploymentUpserted{Deployment: events.Deployment{ID: "dep-1", Namespace: "default", JobID: "web", JobVersion: 1,
			Status: events.DeploymentStatusRunning, TaskGroups: map[string]*events.DeploymentState{"web": {DesiredTotal: 1}}}})
	code, stdout, stderr := runCLI("deployment", "status", "-verbose", "-address", addr, "dep-1")
	if code != 0 || !strings.Contains(stdout, "\nAllocations\n") || !strings.Contains(stdout, "alloc-of-dep-1") ||
		strings.Contains(stdout, "alloc-of-dep-0") {
		t.Fatalf("status -verbose: %d %q\n%s", code, stderr, stdout)
	}
	if code, stdout, _ = runCLI("deployment", "status", "-address", addr, "dep-1"); code != 0 || strings.Contains(stdout, "Allocations") {
		t.Fatalf("status:\n%s", stdout)
	}
}
