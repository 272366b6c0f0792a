package ui

import (
	"testing"

	"github.com/ordoplane/ordo/test/testagent"
)

// A service job with an update block makes a deployment: the deployments
// page lists it, and its page shows the group's progress until it
// succeeds, with the allocation.
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
}
