package jobspec_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// TestUpdateBlockEveryField parses every attribute of the update block
// that deployments use (max_parallel, health_check, min_healthy_time,
// healthy_deadline, progress_deadline, auto_revert, auto_promote, canary,
// stagger) from HCL and from Nomad's api.UpdateStrategy JSON, at job level
// and overridden per group.
func TestUpdateBlockEveryField(t *testing.T) {
	const src = `job "web" {
  update {
    max_parallel      = 2
    health_check      = "task_states"
    min_healthy_time  = "15s"
    healthy_deadline  = "3m"
    progress_deadline = "20m"
    auto_revert       = true
    auto_promote      = true
    canary            = 1
    stagger           = "45s"
  }
  group "web" {
    count = 3
    update {
      canary       = 2
      auto_promote = false
    }
    task "t" {
      driver = "exec"
      config { command = "/bin/sleep" }
    }
  }
}`
	const js = `{"ID":"web","Type":"service",
  "Update":{"MaxParallel":2,"HealthCheck":"task_states","MinHealthyTime":15000000000,"HealthyDeadline":180000000000,
    "ProgressDeadline":1200000000000,"AutoRevert":true,"AutoPromote":true,"Canary":1,"Stagger":45000000000},
  "TaskGroups":[{"Name":"web","Count":3,"Update":{"Canary":2,"AutoPromote":false},
    "Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/sleep"}}]}]}`
	job := events.UpdateStrategy{MaxParallel: 2, HealthCheck: "task_states", MinHealthyTime: 15 * time.Second,
		HealthyDeadline: 3 * time.Minute, ProgressDeadline: 20 * time.Minute, AutoRevert: true, AutoPromote: true,
		Canary: 1, Stagger: 45 * time.Second}
	group := job
	group.Canary, group.AutoPromote = 2, false

	fromHCL, err := jobspec.ParseHCL("web.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := jobspec.ParseJSON(strings.NewReader(js), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for name, j := range map[string]*events.Job{"hcl": fromHCL, "json": fromJSON} {
		if !reflect.DeepEqual(*j.Update, job) || !reflect.DeepEqual(*j.TaskGroups[0].Update, group) {
			t.Errorf("%s: job update %+v, group update %+v", name, *j.Update, *j.TaskGroups[0].Update)
		}
	}

	// A progress deadline of 0 turns it off.
	off, err := jobspec.ParseHCL("web.hcl", []byte(strings.Replace(src, `progress_deadline = "20m"`, `progress_deadline = 0`, 1)))
	if err != nil || off.Update.ProgressDeadline != 0 {
		t.Fatalf("progress_deadline = 0: %+v, %v", off, err)
	}
}
