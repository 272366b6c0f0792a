package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

type deleteAnswer struct {
	Count, Skipped int
	NextToken      string
}

// TestEvalDeleteByFilterAndIDs: DELETE /v1/evaluations by filter pages
// one entry at a time and resumes at NextToken (N4); by ids it deletes
// the named evals; /v1/evaluations/count counts what a filter selects; bad
// bodies are 400s naming the field and append nothing.
func TestEvalDeleteByFilterAndIDs(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	var batch []events.Evaluation
	for i := 0; i < 25; i++ {
		batch = append(batch, testEval(fmt.Sprintf("gone-%02d", i), "gone", events.EvalStatusFailed))
	}
	for i := 0; i < 3; i++ {
		batch = append(batch, testEval(fmt.Sprintf("other-%d", i), "other", events.EvalStatusFailed))
	}
	d.seed(t, &events.EvalsUpserted{Evals: batch})

	var count struct{ Count int }
	d.getJSON(t, "/v1/evaluations/count?filter="+urlq(`JobID == "gone"`), &count)
	if count.Count != 25 {
		t.Fatalf("count = %d, want 25", count.Count)
	}

	before, beforeLen := d.FSM().Applied(), d.archiveLen(t)
	for _, tc := range []struct{ body, field string }{
		{`{"Filter":"Status =="}`, "Filter"},
		{`{}`, "Filter"},
		{`{"Filter":"Status == \"failed\"","EvalIDs":["x"]}`, "EvalIDs"},
		{`{"Filter":"Status == \"failed\"","PerPage":100000}`, "PerPage"},
		{`{"Filter":"Status == \"failed\"","NextToken":"nope"}`, "NextToken"},
		{`{"EvalIDs":[""]}`, "EvalIDs"},
		{`{"Filter":7}`, "Filter"},
		{`{"Filter":"Status == \"failed\"","InFlight":-1}`, "InFlight"},
		{`{"Filter":"Status == \"failed\"","InFlight":1000}`, "InFlight"},
	} {
		r := d.do(t, "DELETE", "/v1/evaluations", strings.NewReader(tc.body))
		if r.status != http.StatusBadRequest || r.apiError(t).Field != tc.field {
			t.Errorf("DELETE %s: %d %s; want 400 naming %s", tc.body, r.status, r.body, tc.field)
		}
	}
	if d.FSM().Applied() != before || d.archiveLen(t) != beforeLen {
		t.Fatal("a bad delete reached the log")
	}

	var a deleteAnswer
	r := d.do(t, "DELETE", "/v1/evaluations", strings.NewReader(`{"Filter":"JobID == \"gone\"","PerPage":10,"MaxPages":1}`))
	r.decode(t, &a)
	if r.status != 200 || a.Count != 10 || a.NextToken == "" {
		t.Fatalf("first page: %d %s", r.status, r.body)
	}
	r = d.do(t, "DELETE", "/v1/evaluations", strings.NewReader(`{"Filter":"JobID == \"gone\"","PerPage":10,"NextToken":"`+a.NextToken+`"}`))
	a = deleteAnswer{}
	r.decode(t, &a)
	if r.status != 200 || a.Count != 15 || a.NextToken != "" {
		t.Fatalf("the rest: %d %s", r.status, r.body)
	}
	r = d.do(t, "DELETE", "/v1/evaluations", strings.NewReader(`{"EvalIDs":["other-1"]}`))
	if r.status != 200 {
		t.Fatalf("by id: %d %s", r.status, r.body)
	}
	if r := d.do(t, "DELETE", "/v1/evaluations", strings.NewReader(`{"EvalIDs":["missing"]}`)); r.status != 404 {
		t.Fatalf("by id, missing: %d %s", r.status, r.body)
	}
	v := projections.NewView(d.FSM().Store())
	var left []string
	if err := evals.Scan(v, evals.Query{Namespace: "*"}, func(e *evals.Eval) error {
		left = append(left, e.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(left, ",") != "other-0,other-2" {
		t.Fatalf("evals left = %v", left)
	}
}

// TestSystemGCQuietWhenNothingToCollect (N15 end to end): a blocking query
// on the evals list does not wake for a forced GC that found nothing; it
// does wake for one that removed an eval.
func TestSystemGCQuietWhenNothingToCollect(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.seed(t, &events.EvalsUpserted{Evals: []events.Evaluation{testEval("live-1", "web", events.EvalStatusBlocked)}})
	r := d.do(t, "GET", "/v1/evaluations", nil)
	idx := r.index(t)
	waiting := d.blockingGet(fmt.Sprintf("/v1/evaluations?index=%d&wait=1s", idx))
	if r := d.do(t, "PUT", "/v1/system/gc", nil); r.status != 200 {
		t.Fatalf("gc: %d %s", r.status, r.body)
	}
	got := receive(t, waiting)
	if got.index(t) != idx {
		t.Fatalf("the blocking query woke at index %d (was %d) for a GC that removed nothing", got.index(t), idx)
	}
	// A collectable eval: a failed eval of a job that does not exist.
	d.seed(t, &events.EvalsUpserted{Evals: []events.Evaluation{testEval("dead-1", "gone", events.EvalStatusFailed)}})
	idx = d.do(t, "GET", "/v1/evaluations", nil).index(t)
	waiting = d.blockingGet(fmt.Sprintf("/v1/evaluations?index=%d&wait=30s", idx))
	if r := d.do(t, "PUT", "/v1/system/gc", nil); r.status != 200 || !strings.Contains(string(r.body), `"Evals":1`) {
		t.Fatalf("gc: %d %s", r.status, r.body)
	}
	if got := receive(t, waiting); got.index(t) <= idx {
		t.Fatalf("the blocking query answered index %d after a GC that removed an eval", got.index(t))
	}
}

// TestEvalDeleteManyPagesInFlight: with pages of 3 and 8 in flight over
// 200 evals where every third does not match, a delete by filter removes
// exactly the matching ones, in one request or in requests of 5 pages
// resumed at NextToken; the pages in flight never overlap (each carries
// its To), so the count is exact.
func TestEvalDeleteManyPagesInFlight(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	var batch []events.Evaluation
	want := 0
	for i := range 200 {
		job := "gone"
		if i%3 == 0 {
			job = "kept"
		} else {
			want++
		}
		batch = append(batch, testEval(fmt.Sprintf("e-%03d", i), job, events.EvalStatusPending))
	}
	for i := 0; i < len(batch); i += 50 {
		d.seed(t, &events.EvalsUpserted{Evals: batch[i : i+50]})
	}
	count := func(filter string) int {
		var c struct{ Count int }
		d.getJSON(t, "/v1/evaluations/count?filter="+urlq(filter), &c)
		return c.Count
	}
	// Requests of 5 pages of 3, 8 in flight, until NextToken is empty.
	deleted, token, requests := 0, "", 0
	for {
		body := fmt.Sprintf(`{"Filter":"JobID == \"gone\" and ID matches \"^e-0\"","PerPage":3,"MaxPages":5,"InFlight":8,"NextToken":%q}`, token)
		var a deleteAnswer
		r := d.do(t, "DELETE", "/v1/evaluations", strings.NewReader(body))
		r.decode(t, &a)
		if r.status != 200 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		deleted += a.Count
		requests++
		if token = a.NextToken; token == "" {
			break
		}
	}
	if got := count(`JobID == "gone" and ID matches "^e-0"`); got != 0 || deleted != 66 || requests < 4 {
		t.Fatalf("after paged requests: %d deleted in %d requests, %d left", deleted, requests, got)
	}
	// The rest in one request.
	var a deleteAnswer
	r := d.do(t, "DELETE", "/v1/evaluations", strings.NewReader(`{"Filter":"JobID == \"gone\"","PerPage":3,"InFlight":8}`))
	r.decode(t, &a)
	if r.status != 200 || a.Count != want-66 || a.NextToken != "" {
		t.Fatalf("delete the rest: %d %s", r.status, r.body)
	}
	if got, kept := count(`JobID == "gone"`), count(`JobID == "kept"`); got != 0 || kept != 200-want {
		t.Fatalf("left: %d gone, %d kept (want 0, %d)", got, kept, 200-want)
	}
}
