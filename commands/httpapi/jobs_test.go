package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/jobs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// jobJSON is a batch job in Nomad's API JSON: batch, so registering it
// creates no deployment for the watcher to move.
func jobJSON(id string, count int) string {
	b, _ := json.Marshal(map[string]any{"Job": map[string]any{
		"ID": id, "Type": "batch", "Datacenters": []string{"dc1"},
		"TaskGroups": []any{map[string]any{"Name": "g", "Count": count,
			"Tasks": []any{map[string]any{"Name": "t", "Driver": "exec", "Config": map[string]any{"command": "/bin/true"}}}}},
	}})
	return string(b)
}

type registerResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Index           uint64
}

func (d *devAgent) registerJob(t testing.TB, body string) registerResponse {
	t.Helper()
	r := d.do(t, "PUT", "/v1/jobs", strings.NewReader(body))
	if r.status != http.StatusOK {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	var out registerResponse
	r.decode(t, &out)
	if out.Index != r.index(t) {
		t.Fatalf("Index %d, X-Nomad-Index %d", out.Index, r.index(t))
	}
	return out
}

func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	first := d.registerJob(t, jobJSON("web", 1))
	if first.EvalID == "" || first.EvalCreateIndex != first.Index || first.JobModifyIndex != first.Index {
		t.Fatalf("register = %+v", first)
	}
	// Unchanged: a new eval, the same JobModifyIndex.
	again := d.registerJob(t, jobJSON("web", 1))
	if again.EvalID == first.EvalID || again.JobModifyIndex != first.JobModifyIndex || again.Index <= first.Index {
		t.Fatalf("unchanged register = %+v (first %+v)", again, first)
	}
	changed := d.registerJob(t, strings.Replace(jobJSON("web", 2), `{"Job":`, `{"EnforceIndex":true,"JobModifyIndex":`+
		jsonNum(first.JobModifyIndex)+`,"Job":`, 1))
	if changed.JobModifyIndex != changed.Index {
		t.Fatalf("changed register = %+v", changed)
	}
	// A stale EnforceIndex is a 409 and appends nothing.
	before := d.archiveLen(t)
	r := d.do(t, "PUT", "/v1/job/web", strings.NewReader(strings.Replace(jobJSON("web", 3), `{"Job":`,
		`{"EnforceIndex":true,"JobModifyIndex":`+jsonNum(first.JobModifyIndex)+`,"Job":`, 1)))
	if r.status != http.StatusConflict || d.archiveLen(t) != before {
		t.Fatalf("stale enforce: %d %s", r.status, r.body)
	}

	var j jobs.Job
	r = d.getJSON(t, "/v1/job/web", &j)
	if j.ID != "web" || j.Version != 1 || j.TaskGroups[0].Count != 2 || j.JobModifyIndex != changed.Index ||
		j.Status != jobs.StatusPending || r.index(t) < changed.Index {
		t.Fatalf("job = %+v", j)
	}
	var list []jobs.Stub
	d.getJSON(t, "/v1/jobs?prefix=w", &list)
	if len(list) != 1 || list[0].ID != "web" || list[0].JobSummary == nil || list[0].JobModifyIndex != changed.Index {
		t.Fatalf("list = %+v", list)
	}
	var versions struct{ Versions []jobs.Job }
	d.getJSON(t, "/v1/job/web/versions", &versions)
	if len(versions.Versions) != 2 || versions.Versions[0].Version != 1 || versions.Versions[1].Version != 0 {
		t.Fatalf("versions = %+v", versions)
	}
	var sum jobs.Summary
	d.getJSON(t, "/v1/job/web/summary", &sum)
	if sum.JobID != "web" || len(sum.Summary) != 1 {
		t.Fatalf("summary = %+v", sum)
	}

	// Stop without shutdown delay (N23), then purge.
	var stop struct {
		EvalID         string
		JobModifyIndex uint64
		Index          uint64
	}
	r = d.do(t, "DELETE", "/v1/job/web?purge=false&global=false&eval_priority=0&no_shutdown_delay=true", nil)
	if r.status != http.StatusOK {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	r.decode(t, &stop)
	if stop.EvalID == "" || stop.JobModifyIndex != stop.Index {
		t.Fatalf("stop = %+v", stop)
	}
	var dereg *events.JobDeregistered
	for _, ev := range pt.Archived(t, d.Store()) {
		if ev.Type == "JobDeregistered" {
			p, _ := events.Decode(ev)
			dereg = p.(*events.JobDeregistered)
		}
	}
	if dereg == nil || !dereg.NoShutdownDelay || dereg.Purge {
		t.Fatalf("JobDeregistered = %+v", dereg)
	}
	d.getJSON(t, "/v1/job/web", &j)
	if !j.Stop || j.Version != 2 || j.Status != jobs.StatusDead {
		t.Fatalf("stopped job = %+v", j)
	}
	if r := d.do(t, "DELETE", "/v1/job/web?purge=true", nil); r.status != http.StatusOK {
		t.Fatalf("purge: %d %s", r.status, r.body)
	}
	if r := d.do(t, "GET", "/v1/job/web", nil); r.status != http.StatusNotFound {
		t.Fatalf("after purge: %d %s", r.status, r.body)
	}
}

func jsonNum(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func TestJobsBlockingList(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	first := d.registerJob(t, jobJSON("a", 1))
	ch := d.blockingGet("/v1/jobs?index=" + jsonNum(first.Index) + "&wait=10s")
	second := d.registerJob(t, jobJSON("b", 1))
	got := receive(t, ch)
	if got.status != http.StatusOK || got.index(t) < second.Index {
		t.Fatalf("blocking list woke with %d at %s", got.status, got.header.Get("X-Nomad-Index"))
	}
	var list []jobs.Stub
	got.decode(t, &list)
	if len(list) != 2 {
		t.Fatalf("list = %+v", list)
	}
}

func TestJobNamespacesAndDispatch(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.putNamespace(t, "payments", "")
	// A job naming no namespace takes ?namespace=.
	r := d.do(t, "PUT", "/v1/jobs?namespace=payments", strings.NewReader(jobJSON("web", 1)))
	if r.status != http.StatusOK {
		t.Fatalf("register in payments: %d %s", r.status, r.body)
	}
	if r := d.do(t, "GET", "/v1/job/web", nil); r.status != http.StatusNotFound {
		t.Fatalf("web in default: %d", r.status)
	}
	var list []jobs.Stub
	d.getJSON(t, "/v1/jobs?namespace=*", &list)
	if len(list) != 1 || list[0].Namespace != "payments" {
		t.Fatalf("list * = %+v", list)
	}

	param := strings.Replace(jobJSON("report", 1), `"Type":"batch"`,
		`"Type":"batch","ParameterizedJob":{"Payload":"required","MetaRequired":["day"]}`, 1)
	reg := d.registerJob(t, param)
	if reg.EvalID != "" {
		t.Fatalf("a parameterized job got an eval: %+v", reg)
	}
	r = d.do(t, "POST", "/v1/job/report/dispatch", strings.NewReader(`{"Payload":"aW5wdXQ=","Meta":{"day":"mon"}}`))
	if r.status != http.StatusOK {
		t.Fatalf("dispatch: %d %s", r.status, r.body)
	}
	var disp struct {
		DispatchedJobID string
		EvalID          string
		JobCreateIndex  uint64
	}
	r.decode(t, &disp)
	if !strings.HasPrefix(disp.DispatchedJobID, "report/dispatch-") || disp.EvalID == "" {
		t.Fatalf("dispatch = %+v", disp)
	}
	// The child's id holds a slash: escaped in the path it is one segment.
	var child jobs.Job
	d.getJSON(t, "/v1/job/"+url.PathEscape(disp.DispatchedJobID), &child)
	if child.ParentID != "report" || string(child.Payload) != "input" || child.Meta["day"] != "mon" {
		t.Fatalf("child = %+v", child)
	}
	var sum jobs.Summary
	d.getJSON(t, "/v1/job/report/summary", &sum)
	if sum.Children == nil || sum.Children.Pending != 1 {
		t.Fatalf("parent summary = %+v", sum)
	}
}

func TestJobsParse(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	body, _ := json.Marshal(map[string]any{"JobHCL": `job "web" {
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`, "Canonicalize": true})
	r := d.do(t, "POST", "/v1/jobs/parse", strings.NewReader(string(body)))
	var j events.Job
	r.decode(t, &j)
	if r.status != http.StatusOK || j.ID != "web" || j.Type != "service" || j.TaskGroups[0].Count != 1 {
		t.Fatalf("parse: %d %s", r.status, r.body)
	}
}

// TestJobBadInputNeverReachesTheLog: invalid job requests get a 400 (or
// 404, 409) naming the field and append nothing. Processors may append on
// their own meanwhile, so the check is that no event carries the request's
// idempotency key and that the applied index moved only for system actors.
func TestJobBadInputNeverReachesTheLog(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.registerJob(t, jobJSON("web", 1))
	valid := jobJSON("api", 1)
	with := func(old, new string) string { return strings.Replace(valid, old, new, 1) }
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		field                    string
	}{
		{"register empty body", "PUT", "/v1/jobs", ``, 400, "body"},
		{"register malformed", "PUT", "/v1/jobs", `{"Job":`, 400, "body"},
		{"register no job", "PUT", "/v1/jobs", `{"EnforceIndex":true}`, 400, "Job"},
		{"register null job", "PUT", "/v1/jobs", `{"Job":null}`, 400, "Job"},
		{"register no id", "PUT", "/v1/jobs", with(`"ID":"api",`, ``), 400, "job.id"},
		{"register bad type", "PUT", "/v1/jobs", with(`"Type":"batch"`, `"Type":"cron"`), 400, "job.type"},
		{"register count string", "PUT", "/v1/jobs", with(`"Count":1`, `"Count":"one"`), 400, "TaskGroups.Count"},
		{"register negative count", "PUT", "/v1/jobs", with(`"Count":1`, `"Count":-1`), 400, "job.group[g].count"},
		{"register no driver", "PUT", "/v1/jobs", with(`"Driver":"exec",`, ``), 400, "job.group[g].task[t].driver"},
		{"register priority", "PUT", "/v1/jobs", with(`"ID":"api",`, `"ID":"api","Priority":500,`), 400, "job.priority"},
		{"register missing namespace", "PUT", "/v1/jobs?namespace=nope", valid, 400, "job.namespace"},
		{"register bad namespace", "PUT", "/v1/jobs?namespace=a%20b", valid, 400, "namespace"},
		{"register path mismatch", "POST", "/v1/job/other", valid, 400, "job.id"},
		{"register index without enforce", "PUT", "/v1/jobs", strings.Replace(valid, `{"Job":`, `{"JobModifyIndex":3,"Job":`, 1), 400, "JobModifyIndex"},
		{"register enforce new", "PUT", "/v1/jobs", strings.Replace(jobJSON("web", 2), `{"Job":`, `{"EnforceIndex":true,"Job":`, 1), 409, ""},
		{"get bad id", "GET", "/v1/job/a%20b", ``, 400, "id"},
		{"get missing", "GET", "/v1/job/nope", ``, 404, ""},
		{"get all namespaces", "GET", "/v1/job/web?namespace=*", ``, 400, "namespace"},
		{"summary missing", "GET", "/v1/job/nope/summary", ``, 404, ""},
		{"versions missing", "GET", "/v1/job/nope/versions", ``, 404, ""},
		{"list bad meta", "GET", "/v1/jobs?meta=maybe", ``, 400, "meta"},
		{"deregister missing", "DELETE", "/v1/job/nope", ``, 404, ""},
		{"deregister bad purge", "DELETE", "/v1/job/web?purge=yes", ``, 400, "purge"},
		{"deregister bad no_shutdown_delay", "DELETE", "/v1/job/web?no_shutdown_delay=x", ``, 400, "no_shutdown_delay"},
		{"deregister bad priority", "DELETE", "/v1/job/web?eval_priority=900", ``, 400, "eval_priority"},
		{"dispatch not parameterized", "POST", "/v1/job/web/dispatch", `{}`, 400, "id"},
		{"dispatch missing", "POST", "/v1/job/nope/dispatch", `{}`, 404, ""},
		{"dispatch bad payload", "POST", "/v1/job/web/dispatch", `{"Payload":"not base64!"}`, 400, "Payload"},
		{"dispatch id mismatch", "POST", "/v1/job/web/dispatch", `{"JobID":"x"}`, 400, "JobID"},
		{"parse empty", "POST", "/v1/jobs/parse", `{}`, 400, "JobHCL"},
		{"parse bad hcl", "POST", "/v1/jobs/parse", `{"JobHCL":"job \"x\" { type = 5 "}`, 400, "job"},
		{"parse variables", "POST", "/v1/jobs/parse", `{"JobHCL":"job \"x\" {}","Variables":"a=1"}`, 400, "Variables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "bad-job-" + tc.name
			before := d.FSM().Applied()
			r := d.do(t, tc.method, tc.path, strings.NewReader(tc.body), "Idempotency-Key", key)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if e := r.apiError(t); tc.field != "" && e.Field != tc.field {
				t.Fatalf("error %s, want Field %q", r.body, tc.field)
			}
			for _, ev := range pt.Archived(t, d.Store()) {
				if ev.CorrelationID == key || (ev.Index > before && !strings.HasPrefix(ev.Actor, "system:")) {
					t.Fatalf("bad input reached the log: %s at %d by %q", ev.Type, ev.Index, ev.Actor)
				}
			}
		})
	}
}
