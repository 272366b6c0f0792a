package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/history"
)

// historyPage GETs a history path, expects 200 and returns the events and
// the next token.
func (d *devAgent) historyPage(t testing.TB, path string) ([]history.Event, string) {
	t.Helper()
	var out []history.Event
	r := d.getJSON(t, path, &out)
	if out == nil {
		t.Fatalf("GET %s: %s is not a list", path, r.body)
	}
	return out, r.header.Get("X-Nomad-NextToken")
}

// types lists the events' types.
func types(evs []history.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// TestAllocHistoryEndToEnd runs an allocation through its whole life on a
// dev agent that schedules — a simulated node registered through the
// client API, a batch job registered, its allocation placed, reported
// running, stopped with the job and reported complete — then reads the
// allocation's, job's, eval's and node's history over HTTP.
func TestAllocHistoryEndToEnd(t *testing.T) {
	t.Parallel()
	d := startAgentWith(t, func(c *agent.Config) {
		c.Scheduler.Disabled = false
		c.HeartbeatGrace = time.Hour // the simulated node heartbeats once
	})
	start := time.Now()
	d.register(t, "n1")
	d.nodeWrite(t, "PUT", "/v1/client/n1/heartbeat", `{"Status":"ready"}`)
	reg := d.registerJob(t, jobJSON("web", 1))

	var alloc *allocs.Alloc
	d.waitFor(t, "the allocation placed", func(v projections.View) bool {
		list, err := allocs.ByJob(v, "default", "web")
		if err != nil || len(list) != 1 {
			return false
		}
		alloc = list[0]
		return true
	})
	report := func(status string) {
		t.Helper()
		body := fmt.Sprintf(`{"Allocs":[{"ID":%q,"ClientStatus":%q}]}`, alloc.ID, status)
		if r := d.do(t, "PUT", "/v1/client/n1/allocs", strings.NewReader(body)); r.status != http.StatusOK {
			t.Fatalf("report %s: %d %s", status, r.status, r.body)
		}
	}
	report(events.AllocClientRunning)
	if r := d.do(t, "DELETE", "/v1/job/web", nil); r.status != http.StatusOK {
		t.Fatalf("stop job: %d %s", r.status, r.body)
	}
	d.waitFor(t, "the allocation told to stop", func(v projections.View) bool {
		a, err := allocs.Get(v, alloc.ID)
		return err == nil && a.DesiredStatus == events.AllocDesiredStop
	})
	report(events.AllocClientComplete)
	d.waitFor(t, "the stop eval complete", func(v projections.View) bool {
		list, err := evals.ByJob(v, "default", "web")
		if err != nil {
			return false
		}
		for _, e := range list {
			if !e.Terminal() {
				return false
			}
		}
		return len(list) == 2
	})

	// The allocation's whole life, in order.
	life, next := d.historyPage(t, "/v1/history/alloc/"+alloc.ID)
	wantTypes := []string{"AllocsPlaced", "AllocsClientUpdated", "AllocsDesiredUpdated", "AllocsClientUpdated"}
	if !slices.Equal(types(life), wantTypes) || next != "" {
		t.Fatalf("alloc history %v (next %q), want %v", types(life), next, wantTypes)
	}
	wantSummaries := []string{
		"placed on node n1 by eval " + reg.EvalID + " (web.g[0], job version 0)",
		"client status pending → running",
		"desired status run → stop (alloc not needed due to job being stopped), by eval ",
		"client status running → complete",
	}
	for i, e := range life {
		if !strings.HasPrefix(e.Summary, wantSummaries[i]) {
			t.Errorf("event %d: %q, want %q…", i, e.Summary, wantSummaries[i])
		}
		if i > 0 && (life[i-1].Index >= e.Index || e.Time.Before(life[i-1].Time)) {
			t.Errorf("event %d out of order: %+v after %+v", i, e, life[i-1])
		}
		if e.Time.Before(start.Add(-time.Minute)) || e.CorrelationID == "" || e.Payload != nil {
			t.Errorf("event %d envelope: %+v", i, e)
		}
	}
	if c := life[3].Changes; len(c) != 1 || c[0].Field != "ClientStatus" || c[0].Old != "running" || c[0].New != "complete" {
		t.Errorf("changes of the last event: %+v", c)
	}

	// The job's related timeline holds every event of the allocation's,
	// each once, told as the allocation's own timeline tells it unless
	// the event is keyed to the job; its own timeline holds only one.
	related, _ := d.historyPage(t, "/v1/history/job/web?related=true")
	for _, e := range life {
		i := slices.IndexFunc(related, func(r history.Event) bool { return r.Index == e.Index && r.Seq == e.Seq })
		switch {
		case i < 0:
			t.Errorf("the job's related timeline lacks the alloc's %s at %d", e.Type, e.Index)
		case related[i].EntityKind == events.KindAlloc && (related[i].EntityID != alloc.ID || related[i].Summary != e.Summary):
			t.Errorf("related line %+v, the alloc's %+v", related[i], e)
		case related[i].EntityKind != events.KindAlloc && related[i].EntityKind != events.KindJob:
			t.Errorf("related line %+v about a %s", related[i], related[i].EntityKind)
		}
	}
	own, _ := d.historyPage(t, "/v1/history/job/web")
	if n := len(own); n >= len(related) || slices.ContainsFunc(own, func(e history.Event) bool { return e.Type == "AllocsClientUpdated" }) {
		t.Errorf("the job's own timeline: %v; related: %v", types(own), types(related))
	}

	// Paging, both ways, through X-Nomad-NextToken.
	for _, reverse := range []bool{false, true} {
		var paged []history.Event
		token := ""
		for pages := 0; ; pages++ {
			if pages > len(life) {
				t.Fatalf("reverse=%v: paging does not end", reverse)
			}
			path := fmt.Sprintf("/v1/history/alloc/%s?per_page=1&reverse=%v&next_token=%s", alloc.ID, reverse, url.QueryEscape(token))
			evs, next := d.historyPage(t, path)
			if len(evs) != 1 {
				t.Fatalf("reverse=%v: page of %d", reverse, len(evs))
			}
			paged = append(paged, evs...)
			if next == "" {
				break
			}
			token = next
		}
		want := slices.Clone(life)
		if reverse {
			slices.Reverse(want)
		}
		if fmt.Sprint(paged) != fmt.Sprint(want) {
			t.Errorf("reverse=%v: pages give %v, want %v", reverse, types(paged), types(want))
		}
	}

	// Index and time bounds; payloads on demand.
	stopAt := life[2]
	evs, _ := d.historyPage(t, fmt.Sprintf("/v1/history/alloc/%s?from_index=%d&payload=true", alloc.ID, stopAt.Index))
	if len(evs) != 2 || evs[0].Index != stopAt.Index || evs[0].Payload == nil || evs[0].Summary != stopAt.Summary {
		t.Errorf("from_index: %+v", evs)
	}
	evs, _ = d.historyPage(t, fmt.Sprintf("/v1/history/alloc/%s?to_index=%d", alloc.ID, life[1].Index))
	if len(evs) != 2 {
		t.Errorf("to_index: %v", types(evs))
	}
	since := url.QueryEscape(stopAt.Time.Format(time.RFC3339Nano))
	evs, _ = d.historyPage(t, fmt.Sprintf("/v1/history/alloc/%s?since=%s", alloc.ID, since))
	if len(evs) != 2 || evs[0].Index != stopAt.Index {
		t.Errorf("since %s: %v", since, types(evs))
	}
	evs, _ = d.historyPage(t, fmt.Sprintf("/v1/history/alloc/%s?until=%s", alloc.ID, since))
	if len(evs) != 3 {
		t.Errorf("until %s: %v", since, types(evs))
	}
	if evs, _ = d.historyPage(t, "/v1/history/alloc/"+alloc.ID+"?since=1h"); len(evs) != 4 {
		t.Errorf("since=1h: %v", types(evs))
	}
	if evs, _ = d.historyPage(t, "/v1/history/alloc/"+alloc.ID+"?until=1h"); len(evs) != 0 {
		t.Errorf("until=1h: %v", types(evs))
	}

	// A past state's timeline ends where that state did (time travel,
	// whose scratch stores hold projections but not the whole archive).
	past := d.do(t, "GET", fmt.Sprintf("/v1/history/alloc/%s?at_index=%d", alloc.ID, life[1].Index), nil)
	var then []history.Event
	if past.status != http.StatusOK {
		t.Fatalf("at_index: %d %s", past.status, past.body)
	}
	past.decode(t, &then)
	if fmt.Sprint(then) != fmt.Sprint(life[:2]) {
		t.Errorf("at_index %d: %+v, want %+v", life[1].Index, then, life[:2])
	}

	// The job's, eval's and node's timelines tell the same story their way.
	jobLife, _ := d.historyPage(t, "/v1/history/job/default/web")
	if jobLife[0].Type != "JobRegistered" || !strings.HasPrefix(jobLife[0].Summary, "registered version 0") {
		t.Errorf("job history starts with %+v", jobLife[0])
	}
	if !slices.ContainsFunc(jobLife, func(e history.Event) bool { return e.Type == "JobDeregistered" && e.Summary == "stopped" }) {
		t.Errorf("job history has no stop: %v", types(jobLife))
	}
	for _, alias := range []string{"/v1/history/job/web", "/v1/history/job/web?namespace=default"} {
		if evs, _ := d.historyPage(t, alias); fmt.Sprint(evs) != fmt.Sprint(jobLife) {
			t.Errorf("%s differs from /v1/history/job/default/web", alias)
		}
	}
	evalLife, _ := d.historyPage(t, "/v1/history/eval/"+reg.EvalID)
	if evalLife[0].Type != "EvalsUpserted" || !strings.HasPrefix(evalLife[0].Summary, "created: job-register for job web") ||
		!slices.ContainsFunc(evalLife, func(e history.Event) bool { return strings.HasPrefix(e.Summary, "placed 1 alloc") }) {
		t.Errorf("eval history: %+v", evalLife)
	}
	nodeLife, _ := d.historyPage(t, "/v1/history/node/n1")
	if nodeLife[0].Type != "NodeRegistered" || !strings.HasPrefix(nodeLife[1].Summary, "status initializing → ready") {
		t.Errorf("node history: %+v", nodeLife[:2])
	}

	// An entity that never appeared is a 404; so is a job in another namespace.
	for _, path := range []string{"/v1/history/alloc/nope", "/v1/history/job/payments/web", "/v1/history/node/" + alloc.ID} {
		r := d.do(t, "GET", path, nil)
		if r.status != http.StatusNotFound {
			t.Errorf("GET %s: %d %s, want 404", path, r.status, r.body)
		} else {
			r.apiError(t)
		}
	}
}

// TestHistoryBadParameters: each bad parameter is a 400 naming it.
func TestHistoryBadParameters(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.putNamespace(t, "payments", "")
	for _, tc := range []struct{ path, field string }{
		{"/v1/history/widget/x", "kind"},
		{"/v1/history/namespace/payments?since=yesterday", "since"},
		{"/v1/history/namespace/payments?until=-2h", "until"},
		{"/v1/history/namespace/payments?since=1h&until=2h", "until"},
		{"/v1/history/namespace/payments?from_index=x", "from_index"},
		{"/v1/history/namespace/payments?to_index=-1", "to_index"},
		{"/v1/history/namespace/payments?from_index=9&to_index=3", "to_index"},
		{"/v1/history/namespace/payments?per_page=x", "per_page"},
		{"/v1/history/namespace/payments?per_page=100000", "per_page"},
		{"/v1/history/namespace/payments?next_token=abc", "next_token"},
		{"/v1/history/namespace/payments?next_token=0.0", "next_token"},
		{"/v1/history/namespace/payments?reverse=maybe", "reverse"},
		{"/v1/history/namespace/payments?payload=yes%20please", "payload"},
		{"/v1/history/namespace/payments?related=maybe", "related"},
		{"/v1/history/namespace/payments?related=true", "related"},
		{"/v1/history/namespace/payments?index=x", "index"},
		{"/v1/history/job/bad_ns!/web", "namespace"},
		{"/v1/history/job/web?namespace=bad_ns!", "namespace"},
		{"/v1/history/job/default/we%20b", "id"},
		{"/v1/history/alloc/a%00b", "id"},
		{"/v1/history/alloc/", "id"},
		{"/v1/history/alloc", "id"}, // redirected to …/alloc/
	} {
		r := d.do(t, "GET", tc.path, nil)
		if r.status != http.StatusBadRequest {
			t.Errorf("GET %s: %d %s, want 400", tc.path, r.status, r.body)
			continue
		}
		if e := r.apiError(t); e.Field != tc.field {
			t.Errorf("GET %s names %q (%s), want %q", tc.path, e.Field, e.Error, tc.field)
		}
	}
}

// TestHistoryBlockingQuery: a read with ?index waits for the history table
// to move past it, and answers the new event.
func TestHistoryBlockingQuery(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.putNamespace(t, "payments", "first")
	r := d.do(t, "GET", "/v1/history/namespace/payments", nil)
	idx := r.index(t)
	ch := d.blockingGet(fmt.Sprintf("/v1/history/namespace/payments?index=%d&wait=30s", idx))
	d.waitGauge(t, "ordo_blocking_queries_open", 1)
	write := d.putNamespace(t, "payments", "second")
	got := receive(t, ch)
	if got.status != http.StatusOK || got.index(t) < write {
		t.Fatalf("woke with %d at index %s, want index ≥ %d", got.status, got.header.Get("X-Nomad-Index"), write)
	}
	var evs []history.Event
	r = d.do(t, "GET", "/v1/history/namespace/payments", nil)
	r.decode(t, &evs)
	if len(evs) != 2 || evs[1].Summary != "updated: description first → second" {
		t.Fatalf("after the update: %+v", evs)
	}
	if stale := d.do(t, "GET", "/v1/history/namespace/payments?stale", nil); string(stale.body) != string(r.body) {
		t.Fatalf("stale read differs: %s", stale.body)
	}
}
