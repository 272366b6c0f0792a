package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/jobs"
)

// planBody wraps a register body's job as a plan request with a diff.
func planBody(registerBody string) string {
	return strings.Replace(registerBody, `{"Job":`, `{"Diff":true,"PolicyOverride":false,"Job":`, 1)
}

type planResponse struct {
	Index, JobModifyIndex uint64
	Annotations           struct {
		DesiredTGUpdates map[string]map[string]uint64
	}
	FailedTGAllocs map[string]*events.AllocMetric
	CreatedEvals   []events.Evaluation
	Diff           struct {
		Type       string
		TaskGroups []struct {
			Type   string
			Name   string
			Fields []struct{ Type, Name, Old, New string }
		}
	}
}

func (d *devAgent) plan(t *testing.T, id, body string) planResponse {
	t.Helper()
	before := d.archiveLen(t)
	r := d.do(t, "PUT", "/v1/job/"+id+"/plan", strings.NewReader(body))
	if r.status != http.StatusOK {
		t.Fatalf("plan: %d %s", r.status, r.body)
	}
	if after := d.archiveLen(t); after != before {
		t.Fatalf("a plan appended to the log: %d events, then %d", before, after)
	}
	var out planResponse
	r.decode(t, &out)
	return out
}

func (d *devAgent) readyNode(t *testing.T, id string, cpu int) {
	d.seed(t, &events.NodeRegistered{Node: events.Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default",
		Resources: events.NodeResources{CPU: cpu, MemoryMB: 8192, DiskMB: 10000},
		Drivers:   map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}, Status: events.NodeStatusReady}})
}

func TestJobPlan(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.readyNode(t, "n1", 4000)

	fresh := d.plan(t, "web", planBody(jobJSON("web", 2)))
	if g := fresh.Annotations.DesiredTGUpdates["g"]; g["Place"] != 2 || g["Stop"] != 0 || fresh.Index != 0 ||
		fresh.Diff.Type != "Added" || len(fresh.FailedTGAllocs) != 0 {
		t.Fatalf("plan of a new job = %+v", fresh)
	}

	reg := d.registerJob(t, jobJSON("web", 2))
	// The scheduler is off here, so nothing was placed: all 3 would be.
	more := d.plan(t, "web", planBody(jobJSON("web", 3)))
	if g := more.Annotations.DesiredTGUpdates["g"]; g["Place"] != 3 || more.Index != reg.JobModifyIndex ||
		more.JobModifyIndex != reg.JobModifyIndex {
		t.Fatalf("plan of a count change = %+v (registered %+v)", more, reg)
	}
	if tg := more.Diff.TaskGroups; more.Diff.Type != "Edited" || len(tg) != 1 || len(tg[0].Fields) != 1 ||
		tg[0].Fields[0].Name != "Count" || tg[0].Fields[0].Old != "2" || tg[0].Fields[0].New != "3" {
		t.Fatalf("diff of a count change = %+v", more.Diff)
	}

	big := strings.Replace(planBody(jobJSON("web", 1)), `"Driver":"exec"`, `"Driver":"exec","Resources":{"CPU":8000,"MemoryMB":64}`, 1)
	full := d.plan(t, "web", big)
	if m := full.FailedTGAllocs["g"]; m == nil || len(full.CreatedEvals) != 1 || full.CreatedEvals[0].Status != events.EvalStatusBlocked {
		t.Fatalf("plan that cannot fit = %+v", full)
	}

	// Bad input: 400 naming the cause, nothing appended.
	before := d.archiveLen(t)
	for _, tc := range []struct{ path, body, field string }{
		{"/v1/job/other/plan", planBody(jobJSON("web", 1)), "job.id"},
		{"/v1/job/web/plan", `{"Diff":true}`, "Job"},
		{"/v1/job/web/plan", planBody(jobJSON("web", -1)), ""},
	} {
		r := d.do(t, "POST", tc.path, strings.NewReader(tc.body))
		if r.status != http.StatusBadRequest {
			t.Fatalf("%s %s: %d %s", tc.path, tc.body, r.status, r.body)
		}
		if e := r.apiError(t); tc.field != "" && e.Field != tc.field {
			t.Fatalf("%s: field %q, want %q", tc.body, e.Field, tc.field)
		}
	}
	if d.archiveLen(t) != before {
		t.Fatal("a bad plan reached the log")
	}
}

// TestJobPlanNomadClient plans through the nomad/api client.
func TestJobPlanNomadClient(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.readyNode(t, "n1", 4000)
	c, err := api.NewClient(&api.Config{Address: d.base})
	if err != nil {
		t.Fatal(err)
	}
	j := api.NewBatchJob("batch", "batch", "global", 50)
	j.Datacenters = []string{"dc1"}
	tg := api.NewTaskGroup("g", 2)
	tg.AddTask(api.NewTask("t", "exec").SetConfig("command", "/bin/true"))
	j.AddTaskGroup(tg)
	resp, _, err := c.Jobs().Plan(j, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := resp.Annotations.DesiredTGUpdates["g"]; u == nil || u.Place != 2 || resp.Diff == nil || resp.Diff.Type != "Added" {
		t.Fatalf("plan = %+v", resp)
	}
}

func TestPeriodicForce(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	body := strings.Replace(jobJSON("report", 1), `"Type":"batch"`, `"Type":"batch","Periodic":{"Spec":"@yearly","ProhibitOverlap":true}`, 1)
	reg := d.registerJob(t, body)
	if reg.EvalID != "" {
		t.Fatalf("a periodic job got an eval: %+v", reg)
	}
	var out struct {
		EvalID          string
		EvalCreateIndex uint64
		Index           uint64
		DispatchedJobID string
	}
	r := d.do(t, "POST", "/v1/job/report/periodic/force", nil)
	if r.status != http.StatusOK {
		t.Fatalf("force: %d %s", r.status, r.body)
	}
	r.decode(t, &out)
	if out.EvalID == "" || out.EvalCreateIndex != out.Index || out.Index != r.index(t) ||
		!strings.HasPrefix(out.DispatchedJobID, "report/periodic-") {
		t.Fatalf("force = %+v", out)
	}
	var child jobs.Job
	d.getJSON(t, "/v1/job/"+url.PathEscape(out.DispatchedJobID), &child)
	if child.ParentID != "report" || child.Periodic != nil {
		t.Fatalf("child = %+v", child)
	}
	var parent jobs.Summary
	d.getJSON(t, "/v1/job/report/summary", &parent)
	if parent.Children == nil || parent.Children.Pending != 1 {
		t.Fatalf("parent summary = %+v", parent)
	}
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/v1/job/nope/periodic/force", http.StatusNotFound},
		{"/v1/job/" + url.PathEscape(out.DispatchedJobID) + "/periodic/force", http.StatusBadRequest},
	} {
		if r := d.do(t, "PUT", tc.path, nil); r.status != tc.status {
			t.Fatalf("%s: %d %s", tc.path, r.status, r.body)
		}
	}
}
