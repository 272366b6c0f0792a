package scheduler_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// TestPlanNamesItsDeployment: a plan names the deployment its eval acted
// under, the one it creates or the version's active one, so the worker
// records it on the eval (Nomad's Evaluation.DeploymentID, which Levant
// polls for); a job without an update strategy has none.
func TestPlanNamesItsDeployment(t *testing.T) {
	h := schedulertest.New()
	h.State.UpsertNode(schedulertest.Node("n1"))
	web := schedulertest.Job("web", events.JobTypeService, 2)
	web.Update = &events.UpdateStrategy{MaxParallel: 1}
	web.TaskGroups[0].Update = web.Update
	h.State.UpsertJob(web)
	h.Bump()
	p, _, err := h.Process(h.NewEval("default", "web", events.EvalTriggerJobRegister))
	if err != nil || p.DeploymentID != "" {
		t.Fatalf("version 0 with no deployment registered: plan names %q, %v", p.DeploymentID, err)
	}

	// Version 1 replaces the allocations: the plan creates the deployment.
	v1 := *web
	v1.Version = 1
	v1.Meta = map[string]string{"owner": "b"}
	h.State.UpsertJob(&v1)
	h.Bump()
	p, _, err = h.Process(h.NewEval("default", "web", events.EvalTriggerJobRegister))
	if err != nil || p.Deployment == nil || p.DeploymentID != p.Deployment.ID {
		t.Fatalf("a created deployment: plan names %q, creates %+v, %v", p.DeploymentID, p.Deployment, err)
	}

	// Version 2, whose deployment registration created (initializing).
	v2 := v1
	v2.Version = 2
	v2.Meta = map[string]string{"owner": "c"}
	h.State.UpsertJob(&v2)
	h.State.UpsertDeployment(&events.Deployment{ID: "dep-v2", Namespace: "default", JobID: "web", JobVersion: 2,
		Status: events.DeploymentStatusInitializing, TaskGroups: map[string]*events.DeploymentState{"web": {DesiredTotal: 2}}})
	h.Bump()
	p, _, err = h.Process(h.NewEval("default", "web", events.EvalTriggerJobRegister))
	if err != nil || p.DeploymentID != "dep-v2" {
		t.Fatalf("the version's deployment: plan names %q, %v", p.DeploymentID, err)
	}

	batch := schedulertest.Job("report", events.JobTypeBatch, 1)
	h.State.UpsertJob(batch)
	h.Bump()
	if p, _, err = h.Process(h.NewEval("default", "report", events.EvalTriggerJobRegister)); err != nil || p.DeploymentID != "" {
		t.Fatalf("a batch job: plan names %q, %v", p.DeploymentID, err)
	}
}
