package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/job/jobspec"
)

var updateJobVerbs = flag.Bool("update-jobverbs", false, "rewrite cmd/ordo/testdata/jobverbs/*.golden")

// jvScrubbers hide what changes from run to run in a command's output: ids
// (UUIDs, ksuids, 8-character short ids) and relative times.
var jvScrubbers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`-\d{9,}-[0-9a-f]{8}\b`), "-<time>-<hex>"},
	{regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<id>"},
	{regexp.MustCompile(`\b[0-9A-Za-z]{27}\b`), "<id>"},
	{regexp.MustCompile(`(Evaluation ID\s+= )[0-9A-Za-z]{8}\b`), "${1}<id>"},
	{regexp.MustCompile(`\d+[smhd]( \d+[smhd])? ago|just now`), "<ago>"},
}

func jvScrub(s string) string {
	for _, r := range jvScrubbers {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

// jvGolden compares got with testdata/jobverbs/<name>.golden, rewriting it
// under -update-jobverbs.
func jvGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "jobverbs", name+".golden")
	if *updateJobVerbs {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: output differs from %s (-update-jobverbs rewrites it)\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// jvCLI runs ordo with args against addr and fails unless it exits with
// code; it returns stdout.
func jvCLI(t *testing.T, addr string, code int, args ...string) string {
	t.Helper()
	args = append([]string{args[0], args[1], "-address", addr}, args[2:]...)
	got, stdout, stderr := runCLI(args...)
	if got != code {
		t.Fatalf("ordo %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, stdout, stderr)
	}
	return stdout
}

const scalableHCL = `job "web" {
  type = "service"
  group "g" {
    count = %d
    scaling {
      min = 1
      max = 4
    }
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}
`

// batchHCL is a batch job id of one task running /bin/true, with extra
// in its job block.
func batchHCL(id, extra string) string {
	return `job "` + id + `" {
  type = "batch"
  ` + extra + `
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`
}

func TestJobInitAndValidate(t *testing.T) {
	addr := startDevAgent(t, func(cfg *agent.Config) { cfg.Scheduler.Disabled = true })
	dir := t.TempDir()
	t.Chdir(dir)
	if out := jvCLI(t, addr, 0, "job", "init"); out != "Example job file written to example.nomad.hcl\n" {
		t.Fatalf("job init: %q", out)
	}
	src, err := os.ReadFile("example.nomad.hcl")
	if err != nil || !bytes.Equal(src, exampleJob) {
		t.Fatalf("example.nomad.hcl: %v", err)
	}
	if _, err := jobspec.ParseHCL("example.nomad.hcl", src); err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}
	code, _, stderr := runCLI("job", "init")
	if code != 1 || !strings.Contains(stderr, "already exists") {
		t.Fatalf("job init over an existing file: %d %q", code, stderr)
	}
	if out := jvCLI(t, addr, 0, "job", "validate", "example.nomad.hcl"); out != "Job validation successful\n" {
		t.Fatalf("validate the example: %q", out)
	}

	bad := writeFile(t, "bad.hcl", strings.Replace(string(src), `driver = "exec"`, `driver = ""`, 1))
	code, stdout, stderr := runCLI("job", "validate", "-address", addr, bad)
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "Job validation errors:\n") || !strings.Contains(stderr, "driver") {
		t.Fatalf("validate a bad job: %d %q %q", code, stdout, stderr)
	}
}

// TestJobVerbs walks history, inspect, revert, scale, eval, allocs and
// promote over one job, and dispatch over a parameterized one.
func TestJobVerbs(t *testing.T) {
	addr := startDevAgent(t, func(cfg *agent.Config) { cfg.Scheduler.Disabled = true })
	v0 := writeFile(t, "web.hcl", strings.Replace(scalableHCL, "%d", "1", 1))
	v1 := writeFile(t, "web.hcl", strings.Replace(scalableHCL, "%d", "2", 1))
	jvCLI(t, addr, 0, "job", "run", "-detach", v0)
	jvCLI(t, addr, 0, "job", "run", "-detach", v1)

	jvGolden(t, "history", jvScrub(jvCLI(t, addr, 0, "job", "history", "web")))
	jvGolden(t, "history-p", jvScrub(jvCLI(t, addr, 0, "job", "history", "-p", "-version", "1", "web")))

	var hist []struct{ Version uint64 }
	if err := json.Unmarshal([]byte(jvCLI(t, addr, 0, "job", "history", "-json", "web")), &hist); err != nil || len(hist) != 2 || hist[0].Version != 1 {
		t.Fatalf("history -json: %+v, %v", hist, err)
	}

	var inspected struct {
		Job struct {
			Version    uint64
			TaskGroups []struct{ Count int }
		}
	}
	if err := json.Unmarshal([]byte(jvCLI(t, addr, 0, "job", "inspect", "-version", "0", "web")), &inspected); err != nil ||
		inspected.Job.Version != 0 || inspected.Job.TaskGroups[0].Count != 1 {
		t.Fatalf("inspect -version 0: %+v, %v", inspected, err)
	}
	if out := jvCLI(t, addr, 0, "job", "inspect", "-t={{.Version}}", "web"); out != "1\n" {
		t.Fatalf("inspect -t: %q", out)
	}
	code, _, stderr := runCLI("job", "inspect", "-address", addr, "-version", "7", "web")
	if code != 1 || !strings.Contains(stderr, "no version 7") {
		t.Fatalf("inspect a missing version: %d %q", code, stderr)
	}

	if out := jvScrub(jvCLI(t, addr, 0, "job", "revert", "-detach", "web", "0")); out != "Evaluation ID: <id>\n" {
		t.Fatalf("revert: %q", out)
	}
	if out := jvCLI(t, addr, 0, "job", "inspect", "-t={{.Version}} {{(index .TaskGroups 0).Count}}", "web"); out != "2 1\n" {
		t.Fatalf("after revert: %q", out)
	}

	// The job has one group: scale needs no group name; the scaling block bounds the count.
	jvCLI(t, addr, 0, "job", "scale", "-detach", "web", "3")
	if out := jvCLI(t, addr, 0, "job", "inspect", "-t={{(index .TaskGroups 0).Count}}", "web"); out != "3\n" {
		t.Fatalf("after scale: %q", out)
	}
	code, _, stderr = runCLI("job", "scale", "-address", addr, "-detach", "web", "g", "9")
	if code != 1 || !strings.Contains(stderr, "maximum 4") {
		t.Fatalf("scale past the max: %d %q", code, stderr)
	}

	if out := jvScrub(jvCLI(t, addr, 0, "job", "eval", "-detach", "web")); !strings.HasPrefix(out, `Created eval ID: "`) {
		t.Fatalf("eval -detach: %q", out)
	}
	jvGolden(t, "allocs-none", jvCLI(t, addr, 0, "job", "allocs", "web"))
	if out := jvCLI(t, addr, 0, "job", "allocs", "-json", "web"); out != "[]\n" {
		t.Fatalf("allocs -json: %q", out)
	}

	jvCLI(t, addr, 0, "job", "run", "-detach", writeFile(t, "b.hcl", batchHCL("b", "")))
	code, _, stderr = runCLI("job", "promote", "-address", addr, "b")
	if code != 1 || !strings.Contains(stderr, "no deployment") {
		t.Fatalf("promote a job without a deployment: %d %q", code, stderr)
	}

	jvCLI(t, addr, 0, "job", "run", "-detach", writeFile(t, "p.hcl", batchHCL("p", `parameterized { meta_required = ["dir"] }`)))
	input := writeFile(t, "input", "payload")
	jvGolden(t, "dispatch", jvScrub(jvCLI(t, addr, 0, "job", "dispatch", "-detach", "-meta", "dir=/tmp", "-id-prefix-template", "nightly", "p", input)))
	code, _, stderr = runCLI("job", "dispatch", "-address", addr, "-detach", "p")
	if code != 1 || !strings.Contains(stderr, `missing required key "dir"`) {
		t.Fatalf("dispatch without the required meta: %d %q", code, stderr)
	}
}
