package plan_test

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands/plan"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestPlanKeepsAUsersStatus: a plan carries the scheduler's copy of the
// deployment (it records the canaries it places), read before a user
// paused or failed the deployment, or the watcher ended it: committing it
// keeps that status and takes the rest; a deployment still initializing
// or running becomes running, as the scheduler acts on it.
func TestPlanKeepsAUsersStatus(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	index := uint64(0)
	for _, tc := range []struct{ stored, want string }{
		{events.DeploymentStatusPaused, events.DeploymentStatusPaused},
		{events.DeploymentStatusFailed, events.DeploymentStatusFailed},
		{events.DeploymentStatusCancelled, events.DeploymentStatusCancelled},
		{events.DeploymentStatusInitializing, events.DeploymentStatusRunning},
		{events.DeploymentStatusRunning, events.DeploymentStatusRunning},
	} {
		id := "d-" + tc.stored
		index++
		pt.ApplyOne(t, f, index, pt.Entry(t, "", &events.DeploymentUpserted{Deployment: events.Deployment{ID: id, Namespace: "default",
			JobID: "web", Status: tc.stored, StatusDescription: "the user's", TaskGroups: map[string]*events.DeploymentState{"web": {DesiredCanaries: 1}}}}))
		copyOf := events.Deployment{ID: id, Namespace: "default", JobID: "web", Status: events.DeploymentStatusRunning,
			StatusDescription: "Deployment is running",
			TaskGroups: map[string]*events.DeploymentState{"web": {DesiredCanaries: 1, PlacedCanaries: []string{"c1"}}}}
		dec, err := plan.Commit{EvalID: "e", Deployment: &copyOf}.Decide(v, time.Unix(0, pt.LeaderTime), nil)
		if err != nil {
			t.Fatal(err)
		}
		index++
		pt.ApplyOne(t, f, index, pt.Entry(t, "", dec.Events...))
		d, err := deployments.Get(v, id)
		if err != nil || d.Status != tc.want || len(d.TaskGroups["web"].PlacedCanaries) != 1 {
			t.Fatalf("stored %s: after the plan %+v, %v", tc.stored, d, err)
		}
		if tc.want == tc.stored && tc.stored != events.DeploymentStatusRunning && d.StatusDescription != "the user's" {
			t.Fatalf("stored %s: description %q", tc.stored, d.StatusDescription)
		}
	}
	// A deployment the plan creates is written as planned.
	created := events.Deployment{ID: "new", Namespace: "default", JobID: "web", Status: events.DeploymentStatusRunning}
	dec, err := plan.Commit{EvalID: "e", Deployment: &created}.Decide(v, time.Unix(0, pt.LeaderTime), nil)
	if err != nil || dec.Events[0].(*events.DeploymentUpserted).Deployment.Status != events.DeploymentStatusRunning {
		t.Fatalf("a new deployment: %+v, %v", dec.Events, err)
	}
}
