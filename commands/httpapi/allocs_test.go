package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// seed is a test command appending the payloads it is given in one entry:
// the scheduler is not wired yet, so tests place allocations and create
// evals and deployments through it.
type seed struct{ ps []events.Payload }

func (seed) Validate() error { return nil }
func (c seed) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: c.ps}, nil
}

// seed appends payloads in one entry and returns its index.
func (d *devAgent) seed(t testing.TB, ps ...events.Payload) uint64 {
	t.Helper()
	out, err := d.Pipeline().Run(context.Background(), "test.seed", commands.Request{}, seed{ps})
	if err != nil {
		t.Fatal(err)
	}
	return out.Index
}

func testEval(id, job, status string) events.Evaluation {
	return events.Evaluation{ID: id, Namespace: "default", Priority: 50, Type: "service", TriggeredBy: events.EvalTriggerJobRegister,
		JobID: job, Status: status, CreateTime: time.Now().UnixNano()}
}

func testAlloc(id, node, job, eval string) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", EvalID: eval, Name: job + ".web[0]", NodeID: node, JobID: job,
		TaskGroup: "web", Resources: events.Resources{CPU: 100, MemoryMB: 64}, DesiredStatus: events.AllocDesiredRun,
		ClientStatus: events.AllocClientPending, CreateTime: time.Now().UnixNano()}
}

// getJSON GETs path, expects 200 and decodes the body into v.
func (d *devAgent) getJSON(t testing.TB, path string, v any) response {
	t.Helper()
	r := d.do(t, "GET", path, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	r.decode(t, v)
	return r
}

func evalIDs(list []*api.Evaluation) []string {
	out := []string{}
	for _, e := range list {
		out = append(out, e.ID)
	}
	return out
}

// TestEvalListOrder is N20: evals list oldest first whatever their ids;
// reverse=true, and the seed's ascending=true, list newest first; pages
// follow X-Nomad-NextToken either way; filter and namespace apply.
func TestEvalListOrder(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	// Created z, m, a, y: id order is not creation order.
	created := []string{"z-eval", "m-eval", "a-eval", "y-eval"}
	for i, id := range created {
		status := events.EvalStatusPending
		if i%2 == 1 {
			status = events.EvalStatusComplete
		}
		d.seed(t, &events.EvalsUpserted{Evals: []events.Evaluation{testEval(id, "web", status)}})
	}
	other := testEval("b-other", "web", events.EvalStatusPending)
	other.Namespace = "other"
	d.seed(t, &events.EvalsUpserted{Evals: []events.Evaluation{other}})
	newest := []string{"y-eval", "a-eval", "m-eval", "z-eval"}

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", created},
		{"?reverse=true", newest},
		{"?ascending=true", newest},
		{"?reverse=false", created},
		{"?namespace=*", append(append([]string{}, created...), "b-other")},
		{"?namespace=other", []string{"b-other"}},
		{"?prefix=m", []string{"m-eval"}},
		{`?filter=` + urlq(`Status == "pending"`), []string{"z-eval", "a-eval"}},
		{`?reverse=true&filter=` + urlq(`Status == "complete"`), []string{"y-eval", "m-eval"}},
	} {
		var list []*api.Evaluation
		d.getJSON(t, "/v1/evaluations"+tc.query, &list)
		if got := evalIDs(list); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GET /v1/evaluations%s = %v, want %v", tc.query, got, tc.want)
		}
	}

	// Paging, both ways.
	for _, tc := range []struct {
		query string
		want  []string
	}{{"", created}, {"&reverse=true", newest}, {"&ascending=true", newest}} {
		var got []string
		token := ""
		for pages := 0; ; pages++ {
			if pages > 4 {
				t.Fatalf("%s: paging never ended", tc.query)
			}
			var list []*api.Evaluation
			r := d.getJSON(t, "/v1/evaluations?per_page=3&next_token="+urlq(token)+tc.query, &list)
			if len(list) > 3 {
				t.Fatalf("a page of %d for per_page=3", len(list))
			}
			got = append(got, evalIDs(list)...)
			if token = r.header.Get("X-Nomad-NextToken"); token == "" {
				break
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("paged%s = %v, want %v", tc.query, got, tc.want)
		}
	}

	for _, tc := range []struct{ query, field string }{
		{"?filter=" + urlq(`Status ==`), "filter"},
		{"?filter=" + urlq(`Status = "pending"`), "filter"},
		{"?next_token=nope", "next_token"},
		{"?per_page=-1", "per_page"},
		{"?reverse=maybe", "reverse"},
		{"?ascending=2", "ascending"},
	} {
		r := d.do(t, "GET", "/v1/evaluations"+tc.query, nil)
		if r.status != http.StatusBadRequest || r.apiError(t).Field != tc.field {
			t.Errorf("GET /v1/evaluations%s: %d %s; want 400 naming %s", tc.query, r.status, r.body, tc.field)
		}
	}

	var jobEvals []*api.Evaluation
	d.getJSON(t, "/v1/job/web/evaluations", &jobEvals)
	if got := evalIDs(jobEvals); !reflect.DeepEqual(got, created) {
		t.Errorf("job evals = %v, want %v", got, created)
	}
}

func urlq(s string) string {
	return strings.NewReplacer(" ", "%20", `"`, "%22", "=", "%3D", "&", "%26").Replace(s)
}

// TestEvalRelated is N17: ?related=true answers the eval's next, previous
// and blocked evals.
func TestEvalRelated(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	prev := testEval("eval-prev", "web", events.EvalStatusComplete)
	mid := testEval("eval-mid", "web", events.EvalStatusComplete)
	mid.PreviousEval, mid.NextEval, mid.BlockedEval = "eval-prev", "eval-next", "eval-blocked"
	next := testEval("eval-next", "web", events.EvalStatusPending)
	blocked := testEval("eval-blocked", "web", events.EvalStatusBlocked)
	d.seed(t, &events.EvalsUpserted{Evals: []events.Evaluation{prev, mid, next, blocked}})

	var e api.Evaluation
	d.getJSON(t, "/v1/evaluation/eval-mid?related=true", &e)
	var got []string
	for _, s := range e.RelatedEvals {
		got = append(got, s.ID+":"+s.Status)
	}
	if want := []string{"eval-next:pending", "eval-prev:complete", "eval-blocked:blocked"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("RelatedEvals = %v, want %v", got, want)
	}
	if e.NextEval != "eval-next" || e.PreviousEval != "eval-prev" || e.BlockedEval != "eval-blocked" || e.CreateIndex == 0 {
		t.Fatalf("eval = %+v", e)
	}
	e = api.Evaluation{}
	d.getJSON(t, "/v1/evaluation/eval-mid", &e)
	if len(e.RelatedEvals) != 0 {
		t.Fatalf("related evals without related=true: %+v", e.RelatedEvals)
	}
	d.getJSON(t, "/v1/evaluation/eval-b", &e) // a unique prefix
	if e.ID != "eval-blocked" {
		t.Fatalf("prefix eval-b found %s", e.ID)
	}
	for path, status := range map[string]int{"/v1/evaluation/missing": 404, "/v1/evaluation/eval-": 400, "/v1/evaluation/eval-mid?related=x": 400} {
		if r := d.do(t, "GET", path, nil); r.status != status {
			t.Errorf("GET %s: %d %s, want %d", path, r.status, r.body, status)
		}
	}
}

// TestAllocStopWithoutShutdownDelay is N23: a stop with
// no_shutdown_delay=true is recorded in the alloc's DesiredTransition, the
// client's blocking query wakes with it, and a pending alloc-stop eval is
// created for the job.
func TestAllocStopWithoutShutdownDelay(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	const node = "node-n23"
	d.register(t, node)
	d.seed(t, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{testAlloc("alloc-1", node, "web", "e1"), testAlloc("alloc-2", node, "web", "e1")}})

	var before []*api.Allocation
	r := d.getJSON(t, "/v1/client/"+node+"/allocations", &before)
	if len(before) != 2 || before[0].DesiredStatus != events.AllocDesiredRun || before[0].DesiredTransition.ShouldMigrate() {
		t.Fatalf("client allocations = %+v", before)
	}
	woke := d.blockingGet(fmt.Sprintf("/v1/client/%s/allocations?index=%d&wait=10s", node, r.index(t)))

	stop := d.do(t, "POST", "/v1/allocation/alloc-1/stop?no_shutdown_delay=true", nil)
	var resp struct {
		EvalID string
		Index  uint64
	}
	stop.decode(t, &resp)
	if stop.status != http.StatusOK || resp.EvalID == "" || resp.Index != stop.index(t) {
		t.Fatalf("stop: %d %s", stop.status, stop.body)
	}
	got := receive(t, woke)
	var after []*api.Allocation
	got.decode(t, &after)
	if got.index(t) < resp.Index || len(after) != 2 {
		t.Fatalf("blocking query answered %d allocs at %d, stop at %d", len(after), got.index(t), resp.Index)
	}
	a := after[0]
	if a.ID != "alloc-1" || a.DesiredStatus != events.AllocDesiredStop || a.DesiredTransition.NoShutdownDelay == nil ||
		!*a.DesiredTransition.NoShutdownDelay || a.DesiredDescription == "" {
		t.Fatalf("stopped alloc = %+v (transition %+v)", a, a.DesiredTransition)
	}
	if b := after[1]; b.DesiredStatus != events.AllocDesiredRun || b.DesiredTransition.NoShutdownDelay != nil {
		t.Fatalf("the other alloc changed: %+v", b)
	}
	var e api.Evaluation
	d.getJSON(t, "/v1/evaluation/"+resp.EvalID, &e)
	if e.TriggeredBy != events.EvalTriggerAllocStop || e.Status != events.EvalStatusPending || e.JobID != "web" || e.CreateIndex != resp.Index {
		t.Fatalf("stop eval = %+v", e)
	}

	// A plain stop leaves the transition unset.
	plain := d.do(t, "PUT", "/v1/allocation/alloc-2/stop", nil)
	if plain.status != http.StatusOK {
		t.Fatalf("plain stop: %d %s", plain.status, plain.body)
	}
	var a2 api.Allocation
	d.getJSON(t, "/v1/allocation/alloc-2", &a2)
	if a2.DesiredStatus != events.AllocDesiredStop || a2.DesiredTransition.NoShutdownDelay != nil {
		t.Fatalf("plainly stopped alloc = %+v", a2)
	}
	for path, status := range map[string]int{
		"/v1/allocation/missing/stop":                       404,
		"/v1/allocation/alloc-/stop":                        400,
		"/v1/allocation/alloc-1/stop?no_shutdown_delay=yes": 400,
	} {
		if r := d.do(t, "POST", path, nil); r.status != status {
			t.Errorf("POST %s: %d %s, want %d", path, r.status, r.body, status)
		}
	}
}

// TestClientAllocUpdates: a client's update records the allocs' client
// status and moves the node's LastAllocUpdateIndex (the N1 marker) in the
// same entry; an alloc on another node is refused by name.
func TestClientAllocUpdates(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.register(t, "node-a")
	d.register(t, "node-b")
	d.seed(t, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{testAlloc("on-a", "node-a", "web", "e1"), testAlloc("on-b", "node-b", "web", "e1")}})
	if n := d.getNode(t, "node-a"); n.LastAllocUpdateIndex != 0 {
		t.Fatalf("LastAllocUpdateIndex before any update = %d", n.LastAllocUpdateIndex)
	}

	r := d.do(t, "PUT", "/v1/client/node-a/allocs", strings.NewReader(
		`{"Allocs":[{"ID":"on-a","ClientStatus":"running","TaskStates":{"server":{"State":"running","StartedAt":1700000000000000000}}}]}`))
	if r.status != http.StatusOK {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	idx := r.index(t)
	if n := d.getNode(t, "node-a"); n.LastAllocUpdateIndex != idx {
		t.Fatalf("LastAllocUpdateIndex = %d, want the update's index %d", n.LastAllocUpdateIndex, idx)
	}
	var a api.Allocation
	d.getJSON(t, "/v1/allocation/on-a", &a)
	if a.ClientStatus != events.AllocClientRunning || a.TaskStates["server"].State != "running" || a.TaskStates["server"].StartedAt.IsZero() || a.ModifyIndex != idx {
		t.Fatalf("updated alloc = %+v", a)
	}
	var onA []*api.Allocation
	d.getJSON(t, "/v1/node/node-a/allocations", &onA)
	if len(onA) != 1 || onA[0].ID != "on-a" {
		t.Fatalf("node-a allocations = %+v", onA)
	}

	before := d.archiveLen(t)
	for _, tc := range []struct {
		path, body string
		status     int
		field, has string
	}{
		{"/v1/client/node-a/allocs", `{"Allocs":[{"ID":"on-b","ClientStatus":"running"}]}`, 400, "Allocs[0].ID", "on-b"},
		{"/v1/client/node-a/allocs", `{"Allocs":[{"ID":"nope","ClientStatus":"running"}]}`, 400, "Allocs[0].ID", "nope"},
		{"/v1/client/node-a/allocs", `{"Allocs":[{"ID":"on-a","ClientStatus":"lost"}]}`, 400, "Allocs[0].ClientStatus", ""},
		{"/v1/client/node-a/allocs", `{"Allocs":[{"ID":"on-a","ClientStatus":"running"},{"ID":"on-a","ClientStatus":"complete"}]}`, 400, "Allocs[1].ID", ""},
		{"/v1/client/node-a/allocs", `{"Allocs":[{"ID":"on-a"`, 400, "body", ""},
		{"/v1/client/node-zz/allocs", `{"Allocs":[]}`, 404, "", "node-zz"},
	} {
		r := d.do(t, "PUT", tc.path, strings.NewReader(tc.body))
		if r.status != tc.status {
			t.Errorf("PUT %s %s: %d %s, want %d", tc.path, tc.body, r.status, r.body, tc.status)
			continue
		}
		e := r.apiError(t)
		if e.Field != tc.field || !strings.Contains(e.Error, tc.has) {
			t.Errorf("PUT %s %s: error %+v, want field %q mentioning %q", tc.path, tc.body, e, tc.field, tc.has)
		}
	}
	if d.archiveLen(t) != before {
		t.Fatal("a refused alloc update reached the log")
	}
}

// TestAllocLists: allocation lists are Nomad's stubs in creation order,
// paged and filtered; by eval, job and node.
func TestAllocLists(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.seed(t, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{testAlloc("zz", "n1", "web", "e1")}})
	d.seed(t, &events.AllocsPlaced{EvalID: "e2", Allocs: []events.Allocation{testAlloc("aa", "n2", "api", "e2")}})
	d.seed(t, &events.AllocsPlaced{EvalID: "e2", Allocs: []events.Allocation{testAlloc("mm", "n1", "api", "e2")}})
	ids := func(list []*api.AllocationListStub) []string {
		out := []string{}
		for _, a := range list {
			out = append(out, a.ID)
		}
		return out
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/v1/allocations", []string{"zz", "aa", "mm"}},
		{"/v1/allocations?reverse=true", []string{"mm", "aa", "zz"}},
		{"/v1/allocations?filter=" + urlq(`NodeID == "n1"`), []string{"zz", "mm"}},
		{"/v1/allocations?per_page=2", []string{"zz", "aa"}},
		{"/v1/evaluation/e2/allocations", []string{"aa", "mm"}},
		{"/v1/job/api/allocations", []string{"aa", "mm"}},
		{"/v1/job/api/allocations?namespace=other", []string{}},
	} {
		var list []*api.AllocationListStub
		r := d.getJSON(t, tc.path, &list)
		if got := ids(list); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GET %s = %v, want %v", tc.path, got, tc.want)
		}
		if strings.Contains(tc.path, "per_page") {
			var rest []*api.AllocationListStub
			d.getJSON(t, "/v1/allocations?per_page=2&next_token="+urlq(r.header.Get("X-Nomad-NextToken")), &rest)
			if got := ids(rest); !reflect.DeepEqual(got, []string{"mm"}) {
				t.Errorf("second page = %v", got)
			}
		}
	}
	if r := d.do(t, "GET", "/v1/allocations?filter="+urlq(`NodeID ==`), nil); r.status != 400 || r.apiError(t).Field != "filter" {
		t.Errorf("bad filter: %d %s", r.status, r.body)
	}
}

// TestDeployments: deployments list in creation order (N20); promote,
// pause, resume and fail change status with their preconditions.
func TestDeployments(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	dep := func(id, job string) *events.DeploymentUpserted {
		return &events.DeploymentUpserted{Deployment: events.Deployment{ID: id, Namespace: "default", JobID: job, Status: events.DeploymentStatusRunning,
			TaskGroups: map[string]*events.DeploymentState{"web": {DesiredCanaries: 1, DesiredTotal: 2, PlacedCanaries: []string{id + "-canary"}},
				"db": {DesiredTotal: 1}}}}
	}
	// Promotion needs the canary reported healthy.
	healthy := true
	d.seed(t, &events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{{ID: "zz-dep-canary", Namespace: "default", EvalID: "e",
		Name: "web.web[0]", NodeID: "n1", JobID: "web", TaskGroup: "web", DeploymentID: "zz-dep", DesiredStatus: events.AllocDesiredRun,
		ClientStatus: events.AllocClientRunning, DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &healthy, Canary: true}}}})
	d.seed(t, dep("zz-dep", "web"))
	d.seed(t, dep("aa-dep", "api"))
	for query, want := range map[string][]string{
		"": {"zz-dep", "aa-dep"}, "?reverse=true": {"aa-dep", "zz-dep"}, "?ascending=true": {"aa-dep", "zz-dep"},
	} {
		var list []*api.Deployment
		d.getJSON(t, "/v1/deployments"+query, &list)
		var got []string
		for _, x := range list {
			got = append(got, x.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GET /v1/deployments%s = %v, want %v", query, got, want)
		}
	}
	write := func(path, body string, status int) deploymentAnswer {
		t.Helper()
		r := d.do(t, "PUT", path, strings.NewReader(body))
		if r.status != status {
			t.Fatalf("PUT %s: %d %s, want %d", path, r.status, r.body, status)
		}
		var out deploymentAnswer
		if status == 200 {
			r.decode(t, &out)
		}
		return out
	}
	info := func(id string) *api.Deployment {
		var x api.Deployment
		d.getJSON(t, "/v1/deployment/"+id, &x)
		return &x
	}
	write("/v1/deployment/pause/zz-dep", `{"DeploymentID":"zz-dep","Pause":true}`, 200)
	if x := info("zz-dep"); x.Status != events.DeploymentStatusPaused {
		t.Fatalf("paused = %+v", x)
	}
	write("/v1/deployment/promote/zz-dep", `{"All":true}`, 409)
	if out := write("/v1/deployment/pause/zz-dep", `{"Pause":false}`, 200); out.EvalID == "" {
		t.Fatalf("resume created no eval: %+v", out)
	}
	out := write("/v1/deployment/promote/zz-dep", `{"All":true}`, 200)
	x := info("zz-dep")
	if x.Status != events.DeploymentStatusRunning || !x.TaskGroups["web"].Promoted || out.EvalID == "" || out.DeploymentModifyIndex != x.ModifyIndex {
		t.Fatalf("promoted = %+v (answer %+v)", x, out)
	}
	var e api.Evaluation
	d.getJSON(t, "/v1/evaluation/"+out.EvalID, &e)
	if e.DeploymentID != "zz-dep" || e.JobID != "web" || e.TriggeredBy != events.EvalTriggerDeploymentWatcher {
		t.Fatalf("promote eval = %+v", e)
	}
	write("/v1/deployment/promote/aa-dep", `{"Groups":["db"]}`, 400)
	write("/v1/deployment/promote/aa-dep", `{"DeploymentID":"other","All":true}`, 400)
	write("/v1/deployment/fail/aa-dep", ``, 200)
	if x := info("aa-dep"); x.Status != events.DeploymentStatusFailed {
		t.Fatalf("failed = %+v", x)
	}
	write("/v1/deployment/fail/aa-dep", ``, 409)
	write("/v1/deployment/fail/missing", ``, 404)
}

type deploymentAnswer struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	Index                 uint64
}

// TestClientAllocationsBlockOnTheirNode: a node's long-poll for its own
// allocations answers the index of its own last allocation change, so
// changes on other nodes neither wake it nor move its index (with 10,000
// clients long-polling, one placement must not wake them all); a change on
// its node does.
func TestClientAllocationsBlockOnTheirNode(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.register(t, "node-a")
	d.register(t, "node-b")
	d.seed(t, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{testAlloc("alloc-a1", "node-a", "web", "e1")}})
	var list []*api.Allocation
	indexA := d.getJSON(t, "/v1/client/node-a/allocations", &list).index(t)
	if len(list) != 1 {
		t.Fatalf("node-a allocations = %+v", list)
	}
	// Another node's allocations change, twice.
	d.seed(t, &events.AllocsPlaced{EvalID: "e2", Allocs: []events.Allocation{testAlloc("alloc-b1", "node-b", "web", "e2")}})
	d.seed(t, &events.AllocsClientUpdated{NodeID: "node-b", Updates: []events.AllocClientUpdate{{ID: "alloc-b1", ClientStatus: events.AllocClientRunning}}})
	got := receive(t, d.blockingGet(fmt.Sprintf("/v1/client/node-a/allocations?index=%d&wait=200ms", indexA)))
	if got.index(t) != indexA {
		t.Fatalf("node-a's long-poll answered index %d after node-b's changes, want its own %d", got.index(t), indexA)
	}
	// Its own allocation changes: it wakes past it.
	woke := d.blockingGet(fmt.Sprintf("/v1/client/node-a/allocations?index=%d&wait=10s", indexA))
	d.seed(t, &events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{{ID: "alloc-a1", DesiredStatus: events.AllocDesiredStop}}})
	got = receive(t, woke)
	got.decode(t, &list)
	if got.index(t) <= indexA || len(list) != 1 || list[0].DesiredStatus != events.AllocDesiredStop {
		t.Fatalf("after its own change: index %d (was %d), %+v", got.index(t), indexA, list)
	}
	// A node that never had an allocation answers index 1 and waits.
	var none []*api.Allocation
	if r := d.getJSON(t, "/v1/client/node-c/allocations", &none); r.index(t) != 1 || len(none) != 0 {
		t.Fatalf("empty node: index %d, %+v", r.index(t), none)
	}
}
