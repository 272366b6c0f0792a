package main

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

const revertingJob = `job "web" {
  update {
    max_parallel      = 1
    auto_revert       = true
    progress_deadline = 0
  }
  group "web" {
    count = 1
    task "t" {
      driver = "exec"
      config { command = "%s" }
    }
  }
}`

// TestDeploymentWriteCommands promotes, pauses, resumes and fails
// deployments by id prefix; a fail with auto_revert reports the version
// the job was reverted to.
func TestDeploymentWriteCommands(t *testing.T) {
	parse := func(cmd string) events.Job {
		j, err := jobspec.ParseHCL("web.hcl", []byte(strings.Replace(revertingJob, "%s", cmd, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return *j
	}
	v0, v1 := parse("/bin/sleep"), parse("/bin/false")
	v1.Version = 1
	healthy, unhealthy := true, false
	canary := func(id string, h *bool) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", EvalID: "e", Name: "api.api[0]", NodeID: "n1", JobID: "api",
			TaskGroup: "api", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning,
			DeploymentStatus: &events.AllocDeploymentStatus{Healthy: h, Canary: true}}
	}
	dep := func(id, job string, version uint64, status string, groups map[string]*events.DeploymentState) *events.DeploymentUpserted {
		return &events.DeploymentUpserted{Deployment: events.Deployment{ID: id, Namespace: "default", JobID: job, JobVersion: version,
			Status: status, StatusDescription: "Deployment is running", TaskGroups: groups}}
	}
	addr := startSeededAgent(t,
		&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{canary("ok-canary", &healthy), canary("sick-canary", &unhealthy)}},
		// Job api is not registered: the watcher leaves these alone.
		dep("ok-dep-1", "api", 0, events.DeploymentStatusRunning, map[string]*events.DeploymentState{
			"api": {DesiredTotal: 1, DesiredCanaries: 1, PlacedCanaries: []string{"ok-canary"}}}),
		dep("sick-dep-1", "api", 0, events.DeploymentStatusRunning, map[string]*events.DeploymentState{
			"api": {DesiredTotal: 1, DesiredCanaries: 1, PlacedCanaries: []string{"sick-canary"}}}),
		&events.JobRegistered{Job: v0},
		dep("web-dep-0", "web", 0, events.DeploymentStatusSuccessful, map[string]*events.DeploymentState{"web": {DesiredTotal: 1, AutoRevert: true}}),
		&events.JobRegistered{Job: v1},
		dep("web-dep-1", "web", 1, events.DeploymentStatusRunning, map[string]*events.DeploymentState{"web": {DesiredTotal: 1, AutoRevert: true}}),
	)

	code, _, stderr := runCLI("deployment", "promote", "-address", addr, "sick-dep")
	if code != 1 || !strings.Contains(stderr, "not all canaries are healthy") {
		t.Fatalf("promote with an unhealthy canary: %d %q", code, stderr)
	}
	code, stdout, stderr := runCLI("deployment", "promote", "-group", "api", "-address", addr, "ok-dep")
	if code != 0 || !strings.HasPrefix(stdout, `Deployment "ok-dep-1" promoted; evaluation "`) {
		t.Fatalf("promote: %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, _ = runCLI("deployment", "status", "-address", addr, "ok-dep-1")
	if code != 0 || !strings.Contains(stdout, "api         true      1") || !strings.Contains(stdout, "Progress Deadline") {
		t.Fatalf("status after promote:\n%s", stdout)
	}
	if code, stdout, stderr = runCLI("deployment", "pause", "-address", addr, "sick"); code != 0 || !strings.HasPrefix(stdout, `Deployment "sick-dep-1" paused at index `) {
		t.Fatalf("pause: %d %q\n%s", code, stderr, stdout)
	}
	if code, stdout, stderr = runCLI("deployment", "resume", "-address", addr, "sick"); code != 0 || !strings.HasPrefix(stdout, `Deployment "sick-dep-1" resumed; evaluation "`) {
		t.Fatalf("resume: %d %q\n%s", code, stderr, stdout)
	}
	if code, stdout, stderr = runCLI("deployment", "fail", "-address", addr, "sick"); code != 0 || strings.Contains(stdout, "Auto-reverted") {
		t.Fatalf("fail: %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = runCLI("deployment", "fail", "-address", addr, "web-dep-1")
	if code != 0 || !strings.HasPrefix(stdout, `Deployment "web-dep-1" failed; evaluation "`) || !strings.HasSuffix(stdout, "Auto-reverted to job version 0\n") {
		t.Fatalf("fail with auto_revert: %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, _ = runCLI("deployment", "status", "-address", addr, "web-dep-1")
	if code != 0 || !strings.Contains(stdout, "Deployment marked as failed - rolling back to job version 0") {
		t.Fatalf("status after fail:\n%s", stdout)
	}
	if code, _, stderr = runCLI("deployment", "fail", "-address", addr, "web-dep-1"); code != 1 || !strings.Contains(stderr, "deployment is failed; only an active deployment can change") {
		t.Fatalf("failing a failed deployment: %d %q", code, stderr)
	}
}
