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
// paused or failed the deployment, or the watcher ended it, which commits
// between the plan's decision and its apply: the plan's entry keeps that
// status and takes the rest. Without a change meanwhile the scheduler's
// running applies (an initializing deployment is now acted on).
func TestPlanKeepsAUsersStatus(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	index := uint64(0)
	apply := func(ps ...events.Payload) {
		index++
		if res := pt.ApplyOne(t, f, index, pt.Entry(t, "", ps...)); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	for _, tc := range []struct {
		stored    string
		meanwhile string // the status a user or the watcher records after the plan's decision
		want      string
	}{
		{events.DeploymentStatusRunning, events.DeploymentStatusPaused, events.DeploymentStatusPaused},
		{events.DeploymentStatusRunning, events.DeploymentStatusFailed, events.DeploymentStatusFailed},
		{events.DeploymentStatusPending, events.DeploymentStatusCancelled, events.DeploymentStatusCancelled},
		{events.DeploymentStatusInitializing, "", events.DeploymentStatusRunning},
		{events.DeploymentStatusRunning, "", events.DeploymentStatusRunning},
	} {
		id := "d-" + tc.stored + "-" + tc.meanwhile
		apply(&events.DeploymentUpserted{Deployment: events.Deployment{ID: id, Namespace: "default", JobID: "web",
			Status: tc.stored, TaskGroups: map[string]*events.DeploymentState{"web": {DesiredCanaries: 1}}}})
		copyOf := events.Deployment{ID: id, Namespace: "default", JobID: "web", Status: events.DeploymentStatusRunning,
			StatusDescription: "Deployment is running", TaskGroups: map[string]*events.DeploymentState{
				"web": {DesiredCanaries: 1, PlacedCanaries: []string{"c1"}}}}
		dec, err := plan.Commit{EvalID: "e", Deployment: &copyOf}.Decide(v, time.Unix(0, pt.LeaderTime), nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.meanwhile != "" {
			apply(&events.DeploymentStatusUpdated{ID: id, Status: tc.meanwhile, StatusDescription: "the user's"})
		}
		apply(dec.Events...)
		d, err := deployments.Get(v, id)
		if err != nil || d.Status != tc.want || len(d.TaskGroups["web"].PlacedCanaries) != 1 {
			t.Fatalf("%s, then %q: after the plan %+v, %v", tc.stored, tc.meanwhile, d, err)
		}
		if tc.meanwhile != "" && d.StatusDescription != "the user's" {
			t.Fatalf("%s, then %q: description %q", tc.stored, tc.meanwhile, d.StatusDescription)
		}
	}
}
