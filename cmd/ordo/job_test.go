package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

const jobHCL = `job "web" {
  type = "batch"
  group "g" {
    count = 2
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startJobAgent starts a dev agent and returns it once it has bootstrapped.
func startJobAgent(t *testing.T) (*agent.Agent, string) {
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
	deadline := time.After(15 * time.Second)
	for {
		_, wake := a.FSM().Notifier().Applied()
		snap := a.Store().Snapshot()
		_, err := namespaces.Get(projections.NewView(snap), namespaces.Default)
		snap.Close()
		if err == nil && a.Node().IsLeader() {
			return a, "http://" + a.HTTPAddr()
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatal("agent never bootstrapped")
		}
	}
}

func TestJobCommands(t *testing.T) {
	a, addr := startJobAgent(t)
	if code, stdout, _ := runCLI("job", "status", "-address", addr); code != 0 || stdout != "No running jobs\n" {
		t.Fatalf("empty status: %d %q", code, stdout)
	}
	// An invalid jobspec is refused locally, naming file and field.
	bad := writeFile(t, "bad.hcl", strings.Replace(jobHCL, "count = 2", "count = -1", 1))
	before := pt.ArchiveLen(t, a.Store())
	if code, _, stderr := runCLI("job", "run", "-address", addr, bad); code != 1 ||
		!strings.Contains(stderr, "bad.hcl") || !strings.Contains(stderr, "job.group[g].count") {
		t.Fatalf("run bad jobspec: %d %s", code, stderr)
	}
	if pt.ArchiveLen(t, a.Store()) != before {
		t.Fatal("an invalid jobspec reached the log")
	}

	path := writeFile(t, "web.hcl", jobHCL)
	code, stdout, stderr := runCLI("job", "run", "-detach", "-address", addr, path)
	if code != 0 || !strings.Contains(stdout, `Job "web" registered`) || !strings.Contains(stdout, "Evaluation ID: ") {
		t.Fatalf("run: %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI("job", "status", "-address", addr)
	if code != 0 || !strings.Contains(stdout, "ID   Namespace  Type   Priority  Status   Submit Date") ||
		!strings.Contains(stdout, "web  default    batch  50        pending") {
		t.Fatalf("status:\n%s", stdout)
	}
	code, stdout, _ = runCLI("job", "status", "-address", addr, "we")
	for _, line := range []string{"ID            = web", "Type          = batch", "Status        = pending",
		"Version       = 0", "\nSummary\nTask Group  Queued  Starting  Running  Failed  Complete  Lost  Unknown\ng           0"} {
		if code != 0 || !strings.Contains(stdout, line) {
			t.Errorf("status web lacks %q:\n%s", line, stdout)
		}
	}
	code, stdout, _ = runCLI("job", "status", "-json", "-address", addr, "web")
	var js map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &js) != nil || js["ID"] != "web" {
		t.Fatalf("status -json: %d %s", code, stdout)
	}
	code, stdout, _ = runCLI("job", "inspect", "-address", addr, "web")
	var inspected struct{ Job events.Job }
	if code != 0 || json.Unmarshal([]byte(stdout), &inspected) != nil || inspected.Job.TaskGroups[0].Count != 2 {
		t.Fatalf("inspect: %d %s", code, stdout)
	}
	// The inspected JSON registers again unchanged.
	again := writeFile(t, "web.json", stdout)
	if code, stdout, stderr := runCLI("job", "run", "-detach", "-address", addr, again); code != 0 ||
		!strings.Contains(stdout, "Evaluation ID: ") {
		t.Fatalf("run inspected JSON: %d %q %q", code, stdout, stderr)
	}

	code, stdout, stderr = runCLI("job", "stop", "-no-shutdown-delay", "-address", addr, "web")
	if code != 0 || !strings.Contains(stdout, `Job "web" stopped`) {
		t.Fatalf("stop: %d %q %q", code, stdout, stderr)
	}
	var dereg *events.JobDeregistered
	for _, ev := range pt.Archived(t, a.Store()) {
		if ev.Type == "JobDeregistered" {
			p, _ := events.Decode(ev)
			dereg = p.(*events.JobDeregistered)
		}
	}
	if dereg == nil || !dereg.NoShutdownDelay {
		t.Fatalf("JobDeregistered = %+v", dereg)
	}
	if _, stdout, _ := runCLI("job", "status", "-address", addr, "web"); !strings.Contains(stdout, "Status        = dead") {
		t.Fatalf("stopped status:\n%s", stdout)
	}
	if code, _, stderr := runCLI("job", "stop", "-purge", "-address", addr, "web"); code != 0 {
		t.Fatalf("purge: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI("job", "status", "-address", addr, "web"); code != 1 || !strings.Contains(stderr, "no job") {
		t.Fatalf("status after purge: %d %s", code, stderr)
	}
}

// TestJobRunFollowsEvaluation runs without -detach: the CLI follows the
// evaluation until it leaves pending (completed here by a stand-in for
// the scheduler, unless a scheduler did it first).
func TestJobRunFollowsEvaluation(t *testing.T) {
	a, addr := startJobAgent(t)
	path := writeFile(t, "web.hcl", jobHCL)
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCLI("job", "run", "-address", addr, path)
		done <- result{code, stdout, stderr}
	}()
	var eval *events.Evaluation
	deadline := time.After(15 * time.Second)
	for eval == nil {
		_, wake := a.FSM().Notifier().Applied()
		for _, ev := range pt.Archived(t, a.Store()) {
			if ev.Type == "EvalsUpserted" {
				p, _ := events.Decode(ev)
				e := p.(*events.EvalsUpserted).Evals[0]
				eval = &e
			}
		}
		if eval != nil {
			break
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatal("no evaluation was created")
		}
	}
	eval.Status = events.EvalStatusComplete
	if _, err := a.Pipeline().Run(context.Background(), "test.seed", commands.Request{},
		seedCmd{[]events.Payload{&events.EvalsUpserted{Evals: []events.Evaluation{*eval}}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.code != 0 || !strings.Contains(r.stdout, `==> Evaluation "`+eval.ID[:8]+`" finished with status "complete"`) {
			t.Fatalf("run: %d %q %q", r.code, r.stdout, r.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("job run never returned")
	}
}

func TestJobUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"job", "run"}, "one argument"},
		{[]string{"job", "run", "/does/not/exist.hcl"}, "no such file"},
		{[]string{"job", "stop"}, "one argument"},
		{[]string{"job", "inspect", "a", "b"}, "one argument"},
		{[]string{"job", "status", "a", "b"}, "accepts at most 1 arg"},
	} {
		code, _, stderr := runCLI(append(tc.args, "-address", "http://127.0.0.1:1")...)
		if code != 1 || !strings.Contains(stderr, tc.says) {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.says)
		}
	}
}

// TestJobPlan plans a job with `ordo job plan`: exit 1 while allocations
// would be created, 0 when nothing would change, 255 on error; nothing
// reaches the log.
func TestJobPlan(t *testing.T) {
	a, addr := startJobAgent(t)
	path := writeFile(t, "web.hcl", jobHCL)
	before := pt.ArchiveLen(t, a.Store())
	code, stdout, stderr := runCLI("job", "plan", "-address", addr, path)
	for _, want := range []string{`+ Job: "web"`, `+ Task Group: "g" (2 create)`, `+ Task: "t"`,
		"Failed to place all allocations", "Job Modify Index: 0", "ordo job run -check-index 0 " + path} {
		if code != 1 || !strings.Contains(stdout, want) {
			t.Errorf("plan of a new job lacks %q: %d\n%s%s", want, code, stdout, stderr)
		}
	}
	if pt.ArchiveLen(t, a.Store()) != before {
		t.Fatal("a plan reached the log")
	}
	if code, _, stderr := runCLI("job", "run", "-detach", "-address", addr, path); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	// Stop the job: then planning the same spec un-stops it, a diff of Stop.
	if code, _, stderr := runCLI("job", "stop", "-address", addr, "web"); code != 0 {
		t.Fatalf("stop: %d %s", code, stderr)
	}
	code, stdout, _ = runCLI("job", "plan", "-address", addr, path)
	if code != 1 || !strings.Contains(stdout, `+/- Job: "web"`) || !strings.Contains(stdout, `+/- Stop: "true" => "false"`) {
		t.Fatalf("plan of a stopped job: %d\n%s", code, stdout)
	}
	if code, _, stderr := runCLI("job", "plan", "-address", addr); code != 255 || !strings.Contains(stderr, "one argument") {
		t.Fatalf("plan without a file: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI("job", "plan", "-address", addr, "/nonexistent.hcl"); code != 255 || stderr == "" {
		t.Fatalf("plan of a missing file: %d %s", code, stderr)
	}
}

// TestJobPlanNoChange: a stopped job with a stopped spec plans nothing.
func TestJobPlanNoChange(t *testing.T) {
	_, addr := startJobAgent(t)
	path := writeFile(t, "web.hcl", strings.Replace(jobHCL, "count = 2", "count = 0", 1))
	if code, _, stderr := runCLI("job", "run", "-detach", "-address", addr, path); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	code, stdout, stderr := runCLI("job", "plan", "-address", addr, path)
	if code != 0 || !strings.Contains(stdout, "All tasks successfully allocated") || strings.Contains(stdout, "+/-") {
		t.Fatalf("plan of an unchanged job: %d\n%s%s", code, stdout, stderr)
	}
}
