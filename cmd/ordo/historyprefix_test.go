package main

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// `ordo history alloc <prefix>` reads the history of the one allocation
// whose id starts with the prefix, as every other command takes a prefix;
// an ambiguous prefix names the candidates.
func TestHistoryTakesAPrefix(t *testing.T) {
	alloc := func(id string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", EvalID: "eval-1", Name: "web.web[0]", NodeID: "node-1",
			JobID: "web", TaskGroup: "web", DesiredStatus: "run", ClientStatus: "pending"}
	}
	addr := startSeededAgent(t,
		&events.JobRegistered{Job: events.Job{ID: "web", Namespace: "default", Type: "service",
			TaskGroups: []events.TaskGroup{{Name: "web", Count: 2}}}},
		&events.AllocsPlaced{EvalID: "eval-1", Allocs: []events.Allocation{
			alloc("0b9a3f5e-6f7c-4a11-9d1e-2f3c4d5e6f70"), alloc("0b9a77aa-0000-4000-8000-000000000001")}},
	)
	_, full, _ := runCLI("history", "-address", addr, "alloc", "0b9a3f5e-6f7c-4a11-9d1e-2f3c4d5e6f70")
	code, stdout, stderr := runCLI("history", "-address", addr, "alloc", "0b9a3f")
	if code != 0 || stdout != full || !strings.Contains(stdout, "AllocsPlaced") {
		t.Fatalf("history by prefix: %d %q\n%s\nwant\n%s", code, stderr, stdout, full)
	}
	code, _, stderr = runCLI("history", "-address", addr, "alloc", "0b9a")
	if code != 1 || !strings.Contains(stderr, `prefix "0b9a" matches several allocs: 0b9a3f5e-6f7c-4a11-9d1e-2f3c4d5e6f70, 0b9a77aa-0000-4000-8000-000000000001`) {
		t.Fatalf("ambiguous prefix: %d %q", code, stderr)
	}
}
