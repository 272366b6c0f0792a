package ui

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/test/testagent"
)

// A service job with an update block makes a deployment: the deployments
// page lists it, and its page shows the group's progress until it
// succeeds, with the allocation; one still running can be failed from
// its page.
func TestDeploymentProgress(t *testing.T) {
	s := start(t)
	alloc := runningAlloc(t, s, echoJob("echo"))
	var depID string
	testagent.WaitFor(t, testagent.ServerTimeout, "the job's deployment", func() bool {
		d, _, err := s.api.Jobs().LatestDeployment("echo", nil)
		if err != nil || d == nil {
			return false
		}
		depID = d.ID
		return true
	})

	s.open("/deployments")
	s.waitText("main table", depID[:8])
	s.waitText("main table", "echo")
	s.shot("deployments")
	s.checkA11y("deployments")

	s.click("main table a", depID[:8])
	s.waitText("main h1", depID[:8])
	s.waitText("main h1", "successful") // min_healthy_time 1s: it finishes, and the page follows
	s.waitText("main .group-progress", "1 of 1 healthy")
	var value float64
	if err := s.eval(`document.querySelector('main .group-progress progress').value`, &value); err != nil || value != 1 {
		t.Fatalf("progress bar value %v (err %v), want 1", value, err)
	}
	s.waitText("main table[aria-label=allocations]", alloc.ID[:8])
	s.shot("deployment")
	s.checkA11y("deployment")

	// A deployment still waiting for health shows Promote and Fail;
	// failing it from the page fails it and the buttons go.
	slow := echoJob("slow")
	slow.Update.MinHealthyTime = new(10 * time.Minute)
	slow.Update.HealthyDeadline = new(15 * time.Minute)
	slow.Update.ProgressDeadline = new(20 * time.Minute)
	runningAlloc(t, s, slow)
	var slowID string
	testagent.WaitFor(t, testagent.ServerTimeout, "the slow job's deployment", func() bool {
		d, _, err := s.api.Jobs().LatestDeployment("slow", nil)
		if err != nil || d == nil {
			return false
		}
		slowID = d.ID
		return true
	})
	s.open("/deployments/" + slowID)
	s.waitText("main h1", "running")
	s.waitText("main .group-progress", "0 of 1 healthy")
	s.waitText("main .write button", "Promote")
	if err := s.eval(`window.confirm = () => true`, nil); err != nil {
		t.Fatal(err)
	}
	s.click("main .write button", "Fail")
	testagent.WaitFor(t, testagent.ServerTimeout, "the deployment failed", func() bool {
		d, _, err := s.api.Deployments().Info(slowID, nil)
		return err == nil && d.Status == "failed"
	})
	s.waitText("main h1", "failed")
	s.waitNoText("main .toolbar", "Promote")
}
