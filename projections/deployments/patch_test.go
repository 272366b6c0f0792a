package deployments_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestJobIndexesAndPatches: a deployment created initializing, with its
// job version's registration, records that entry's index as the job's
// modify indexes (and create index for a new job); a status update
// promotes the groups it names and restarts the deadlines it gives; the
// JSON is Nomad's api.Deployment with every field its client reads.
func TestJobIndexesAndPatches(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, deployments.Projection{})
	v := projections.NewView(store)
	reg := deployment("new", "web")
	reg.Status = events.DeploymentStatusInitializing
	reg.TaskGroups["web"].ProgressDeadline = 10 * time.Minute
	pt.ApplyOne(t, f, 7, pt.Entry(t, "c1", &events.DeploymentUpserted{Deployment: reg}))
	again := deployment("again", "web")
	again.Status, again.JobCreateIndex = events.DeploymentStatusInitializing, 7
	pt.ApplyOne(t, f, 9, pt.Entry(t, "c2", &events.DeploymentUpserted{Deployment: again}))
	sched := deployment("sched", "api")
	sched.JobModifyIndex = 4
	pt.ApplyOne(t, f, 10, pt.Entry(t, "c3", &events.DeploymentUpserted{Deployment: sched}))
	for _, tc := range []struct {
		id                   string
		modify, spec, create uint64
	}{{"new", 7, 7, 7}, {"again", 9, 9, 7}, {"sched", 4, 0, 0}} {
		d, err := deployments.Get(v, tc.id)
		if err != nil || d.JobModifyIndex != tc.modify || d.JobSpecModifyIndex != tc.spec || d.JobCreateIndex != tc.create {
			t.Fatalf("%s: job indexes %d/%d/%d, want %d/%d/%d (%v)", tc.id, d.JobModifyIndex, d.JobSpecModifyIndex,
				d.JobCreateIndex, tc.modify, tc.spec, tc.create, err)
		}
	}
	// The watcher's whole replacement keeps what it read.
	d, _ := deployments.Get(v, "new")
	d.Status = events.DeploymentStatusRunning
	pt.ApplyOne(t, f, 11, pt.Entry(t, "c4", &events.DeploymentUpserted{Deployment: d.Deployment}))

	pt.ApplyOne(t, f, 12, pt.Entry(t, "c5", &events.DeploymentStatusUpdated{ID: "new", Status: events.DeploymentStatusRunning,
		StatusDescription: "Deployment is running after promotion", Promote: true, Groups: []string{"web"},
		RequireProgressBy: map[string]int64{"web": 5e18, "gone": 1}}))
	d, err := deployments.Get(v, "new")
	if err != nil || !d.TaskGroups["web"].Promoted || d.TaskGroups["api"].Promoted || d.TaskGroups["web"].RequireProgressBy != 5e18 ||
		d.TaskGroups["api"].RequireProgressBy != 0 || d.TaskGroups["gone"] != nil || d.JobModifyIndex != 7 {
		t.Fatalf("promoted web = %+v %+v %+v, %v", d, d.TaskGroups["web"], d.TaskGroups["api"], err)
	}

	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ID", "Namespace", "JobID", "JobVersion", "JobModifyIndex", "JobSpecModifyIndex", "JobCreateIndex",
		"IsMultiregion", "TaskGroups", "Status", "StatusDescription", "CreateIndex", "ModifyIndex", "CreateTime", "ModifyTime"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s in %s", k, b)
		}
	}
	web := got["TaskGroups"].(map[string]any)["web"].(map[string]any)
	for _, k := range []string{"PlacedCanaries", "AutoRevert", "ProgressDeadline", "RequireProgressBy", "Promoted",
		"DesiredCanaries", "DesiredTotal", "PlacedAllocs", "HealthyAllocs", "UnhealthyAllocs"} {
		if _, ok := web[k]; !ok {
			t.Errorf("no %s in group %v", k, web)
		}
	}
	if web["ProgressDeadline"] != float64(10*time.Minute) || got["JobSpecModifyIndex"] != float64(7) {
		t.Fatalf("JSON %s", b)
	}
	pt.CheckRebuildEqualsLive(t, store, deployments.Projection{})
}
