package deployments_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestSchedulerDeploymentGetsItsJobCreateIndex: a deployment the scheduler
// creates (running, without a JobCreateIndex) gets its job's create index,
// the index of the job's first registration since it was last purged.
func TestSchedulerDeploymentGetsItsJobCreateIndex(t *testing.T) {
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live, deployments.Projection{})
	v := projections.NewView(live)
	job := events.Job{ID: "web", Namespace: "default", Type: events.JobTypeService}
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c1", &events.JobRegistered{Job: job}))
	job.Version = 1
	pt.ApplyOne(t, f, 6, pt.Entry(t, "c2", &events.JobRegistered{Job: job}))
	pt.ApplyOne(t, f, 7, pt.Entry(t, "c3", &events.DeploymentUpserted{Deployment: deployment("d1", "web")}))
	pt.ApplyOne(t, f, 9, pt.Entry(t, "c4", &events.JobDeregistered{Namespace: "default", ID: "web", Purge: true}))
	job.Version = 0
	pt.ApplyOne(t, f, 11, pt.Entry(t, "c5", &events.JobRegistered{Job: job}))
	pt.ApplyOne(t, f, 12, pt.Entry(t, "c6", &events.DeploymentUpserted{Deployment: deployment("d2", "web")}))
	pt.ApplyOne(t, f, 13, pt.Entry(t, "c7", &events.DeploymentUpserted{Deployment: deployment("d3", "unknown")}))
	for id, want := range map[string]uint64{"d1": 4, "d2": 11, "d3": 0} {
		d, err := deployments.Get(v, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.JobCreateIndex != want {
			t.Errorf("%s: JobCreateIndex %d, want %d", id, d.JobCreateIndex, want)
		}
	}
	pt.CheckRebuildEqualsLive(t, live, deployments.Projection{})
}
