package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// ordo eval list -filter, ordo eval delete -filter (paged, with the
// progress bar on stderr), ordo eval delete <id>..., a bad filter named,
// and ordo system gc.
func TestEvalDeleteAndSystemGCCommands(t *testing.T) {
	ev := func(id, job, status string) events.Evaluation {
		return events.Evaluation{ID: id, Namespace: "default", Priority: 50, Type: "service", TriggeredBy: "job-register",
			JobID: job, Status: status}
	}
	var seed []events.Evaluation
	for i := range 5 {
		seed = append(seed, ev(fmt.Sprintf("gone-%d", i), "gone", "pending"))
	}
	seed = append(seed, ev("other-1", "other", "pending"), ev("other-2", "other", "pending"), ev("done-1", "old", "complete"))
	addr := startSeededAgent(t, &events.EvalsUpserted{Evals: seed})

	code, stdout, stderr := runCLI("eval", "list", "-address", addr, "-filter", `JobID == "gone"`)
	if code != 0 || strings.Count(stdout, "gone-") != 5 || strings.Contains(stdout, "other-") {
		t.Fatalf("eval list -filter: %d %q\n%s", code, stderr, stdout)
	}
	code, _, stderr = runCLI("eval", "delete", "-address", addr, "-filter", `JobID ==`)
	if code != 1 || !strings.Contains(stderr, "filter") {
		t.Fatalf("eval delete with a bad filter: %d %q, want a failure naming the filter", code, stderr)
	}
	// Pages of 2, one page a request: three requests, the bar on stderr.
	code, stdout, stderr = runCLI("eval", "delete", "-address", addr, "-filter", `JobID == "gone"`, "-page-size", "2", "-pages-per-request", "1")
	if code != 0 || stdout != "Deleted 5 evaluations\n" || !strings.Contains(stderr, "deleting evaluations") || !strings.Contains(stderr, "5/5") {
		t.Fatalf("eval delete -filter: %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI("eval", "list", "-address", addr)
	if code != 0 || strings.Contains(stdout, "gone-") || !strings.Contains(stdout, "other-1") {
		t.Fatalf("eval list after the delete: %d\n%s", code, stdout)
	}
	code, stdout, stderr = runCLI("eval", "delete", "-address", addr, "other-1", "other-2")
	if code != 0 || stdout != "Deleted 2 evaluations\n" {
		t.Fatalf("eval delete <id> <id>: %d %q\n%s", code, stderr, stdout)
	}
	if code, _, stderr = runCLI("eval", "delete", "-address", addr, "missing"); code != 1 || !strings.Contains(stderr, "missing") {
		t.Fatalf("eval delete of a missing eval: %d %q", code, stderr)
	}
	if code, _, _ = runCLI("eval", "delete", "-address", addr); code != 1 {
		t.Fatalf("eval delete without ids or filter: %d, want 1", code)
	}
	// A forced GC collects the complete eval of a job that is gone.
	code, stdout, stderr = runCLI("system", "gc", "-address", addr)
	if code != 0 || !strings.HasPrefix(stdout, "Garbage collected: 1 evaluations, 0 allocations") {
		t.Fatalf("system gc: %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, _ = runCLI("eval", "list", "-address", addr)
	if code != 0 || strings.Contains(stdout, "done-1") {
		t.Fatalf("eval list after gc: %d\n%s", code, stdout)
	}
}
