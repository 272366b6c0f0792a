package jobs_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
)

// TestDeploymentSuccessMarksVersionStable: a version becomes stable when
// its deployment succeeds (by status update or an upsert arriving
// successful); the job's JobModifyIndex does not move, a new version
// starts unstable, and the old one stays stable.
func TestDeploymentSuccessMarksVersionStable(t *testing.T) {
	f := newFixture(t)
	f.apply(&events.JobRegistered{Job: testJob("web", 0, "g")})
	f.apply(&events.DeploymentUpserted{Deployment: events.Deployment{ID: "d0", Namespace: "default", JobID: "web",
		JobVersion: 0, Status: events.DeploymentStatusRunning}})
	before := f.job("default", "web")
	if before.Stable {
		t.Fatal("version 0 stable before its deployment succeeded")
	}
	f.apply(&events.DeploymentStatusUpdated{ID: "d0", Status: events.DeploymentStatusFailed})
	if f.job("default", "web").Stable {
		t.Fatal("a failed deployment made its version stable")
	}
	f.apply(&events.DeploymentStatusUpdated{ID: "d0", Status: events.DeploymentStatusSuccessful})
	after := f.job("default", "web")
	if !after.Stable || after.JobModifyIndex != before.JobModifyIndex {
		t.Fatalf("after success: stable %v, job modify index %d (was %d)", after.Stable, after.JobModifyIndex, before.JobModifyIndex)
	}

	f.apply(&events.JobRegistered{Job: testJob("web", 1, "g", "h")})
	if f.job("default", "web").Stable {
		t.Fatal("a new version starts stable")
	}
	f.apply(&events.DeploymentUpserted{Deployment: events.Deployment{ID: "d1", Namespace: "default", JobID: "web",
		JobVersion: 1, Status: events.DeploymentStatusSuccessful}})
	vs, err := jobs.Versions(projections.NewView(f.store), "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	stable := map[uint64]bool{}
	for _, v := range vs {
		stable[v.Version] = v.Stable
	}
	if !stable[0] || !stable[1] || len(stable) != 2 {
		t.Fatalf("versions' stability = %v", stable)
	}
}
