package main

import (
	"bytes"
	"context"
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
	// Pages of 2, one page a request: three requests, the progress on stderr
	// (plain lines: stderr is not a terminal).
	code, stdout, stderr = runCLI("eval", "delete", "-address", addr, "-filter", `JobID == "gone"`, "-page-size", "2", "-pages-per-request", "1", "-yes")
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

// runCLIWithInput is runCLI with stdin.
func runCLIWithInput(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	root := newRootCommand(&out, &errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(normalizeArgs(args))
	if err := root.ExecuteContext(context.Background()); err != nil {
		return 1, out.String(), errOut.String() + err.Error()
	}
	return 0, out.String(), errOut.String()
}

// ordo eval delete -filter shows how many evals the filter selects and
// deletes only after a yes (Nomad's confirmation; -yes skips it): no, or
// no answer at all, deletes nothing; a filter that selects nothing asks
// nothing.
func TestEvalDeleteAsksForConfirmation(t *testing.T) {
	var seed []events.Evaluation
	for i := range 3 {
		seed = append(seed, events.Evaluation{ID: fmt.Sprintf("gone-%d", i), Namespace: "default", Priority: 50,
			Type: "service", TriggeredBy: "job-register", JobID: "gone", Status: "pending"})
	}
	addr := startSeededAgent(t, &events.EvalsUpserted{Evals: seed})
	left := func() int {
		t.Helper()
		code, stdout, stderr := runCLI("eval", "list", "-address", addr)
		if code != 0 {
			t.Fatalf("eval list: %d %q", code, stderr)
		}
		return strings.Count(stdout, "gone-")
	}
	filter := `JobID == "gone"`
	for _, answer := range []string{"n\n", "", "maybe\n"} {
		code, stdout, stderr := runCLIWithInput(answer, "eval", "delete", "-address", addr, "-filter", filter, "-quiet")
		if code != 0 || stdout != "Cancelled: no evaluation deleted\n" || !strings.Contains(stderr, "Delete the 3 evaluations") {
			t.Fatalf("answer %q: %d\nstdout %q\nstderr %q", answer, code, stdout, stderr)
		}
		if n := left(); n != 3 {
			t.Fatalf("answer %q deleted evals: %d left", answer, n)
		}
	}
	code, stdout, stderr := runCLIWithInput("none\n", "eval", "delete", "-address", addr, "-filter", `JobID == "nope"`)
	if code != 0 || stdout != "No evaluations match the filter JobID == \"nope\"\n" || strings.Contains(stderr, "[y/N]") {
		t.Fatalf("filter selecting nothing: %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLIWithInput("Y\n", "eval", "delete", "-address", addr, "-filter", filter, "-quiet")
	if code != 0 || stdout != "Deleted 3 evaluations\n" || !strings.Contains(stderr, "[y/N]") {
		t.Fatalf("answer y: %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	if n := left(); n != 0 {
		t.Fatalf("%d evals left after yes", n)
	}
}
