package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/projections"
)

// liveHistory is a History that answers every index from the live store
// and counts its calls: enough to test the API's plumbing apart from how
// past states are built (history/timetravel, tested there and in
// cmd/agent).
type liveHistory struct {
	d     *devAgent
	views atomic.Int64
	at    atomic.Uint64
	// stray makes every read with a ReadSet stray; sets records the
	// tables of each call's ReadSet ("-" for none).
	stray bool
	sets  []string
}

func (h *liveHistory) View(ctx context.Context, index uint64) (projections.View, func(), error) {
	h.views.Add(1)
	h.at.Store(index)
	rs := projections.ReadSetFrom(ctx)
	set := "-"
	if rs != nil {
		set = strings.Join(rs.Tables, ",")
	}
	h.sets = append(h.sets, set)
	snap := h.d.Store().Snapshot()
	return projections.NewView(snap), func() {
		if h.stray && rs != nil {
			rs.Stray()
		}
		snap.Close()
	}, nil
}

func (h *liveHistory) ResolveTime(t time.Time) (uint64, bool, error) { return 3, true, nil }

func TestHistoryPlumbing(t *testing.T) {
	d := startAgent(t)
	api, err := httpapi.New(httpapi.Config{Node: d.Node(), FSM: d.FSM(), Pipeline: d.Pipeline(), Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	h := &liveHistory{d: d}
	plain, hist := httptest.NewServer(api), httptest.NewServer(api.WithHistory(h))
	defer plain.Close()
	defer hist.Close()
	get := func(base, path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	// Without WithHistory a past state is refused, never answered live.
	resp, body := get(plain.URL, "/v1/namespaces?at_index=1")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "does not serve past states") {
		t.Fatalf("plain server at_index: %d %s", resp.StatusCode, body)
	}
	// With it, lists (query) and pages (queryPage) read the past state.
	for _, path := range []string{"/v1/namespace/default?at_index=2", "/v1/jobs?at_index=2&per_page=1", "/v1/nodes?at_index=2"} {
		resp, body := get(hist.URL, path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Ordo-At-Index") != "2" || resp.Header.Get("X-Nomad-Index") != "2" {
			t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, resp.Header, body)
		}
	}
	if h.views.Load() != 3 {
		t.Fatalf("History.View called %d times, want 3", h.views.Load())
	}
	// at_time resolves through History.ResolveTime.
	resp, body = get(hist.URL, "/v1/namespaces?at_time=2026-11-30T14:02:00Z")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Ordo-At-Index") != "3" || h.at.Load() != 3 {
		t.Fatalf("at_time: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	// Requests without either parameter never reach History.
	resp, _ = get(hist.URL, "/v1/namespaces")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Ordo-At-Index") != "" || h.views.Load() != 4 {
		t.Fatalf("live read through WithHistory: %d %v, %d views", resp.StatusCode, resp.Header, h.views.Load())
	}
	// The read declares its tables; one that strays is read again from
	// every projection.
	h.sets, h.stray = nil, true
	resp, body = get(hist.URL, "/v1/nodes?at_index=2")
	if resp.StatusCode != http.StatusOK || strings.Join(h.sets, " ") != "nodes,node_alloc_updates -" {
		t.Fatalf("a straying read: %d %s, views with tables %q", resp.StatusCode, body, h.sets)
	}
	h.sets, h.stray = nil, false
	get(hist.URL, "/v1/nodes?at_index=2")
	if strings.Join(h.sets, " ") != "nodes,node_alloc_updates" {
		t.Fatalf("a read within its tables: views with tables %q", h.sets)
	}
	h.views.Store(4)
	// An endpoint that reads no projections is refused, History untouched.
	resp, body = get(hist.URL, "/v1/status/peers?at_index=2")
	var e struct{ Field string }
	json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != http.StatusBadRequest || e.Field != "at_index" || h.views.Load() != 4 {
		t.Fatalf("status/peers at_index: %d %s", resp.StatusCode, body)
	}
}

// refusingHistory refuses every index as history/timetravel does one it
// does not serve: retry says whether it will later.
type refusingHistory struct{ retry bool }

type notServedErr struct{ retry bool }

func (e notServedErr) Error() string {
	if e.retry {
		return "index 2 is not served: the history is being indexed: the backfill has reached 1"
	}
	return "index 2 is not served: pruned; the oldest index served is 5"
}
func (e notServedErr) Retryable() bool { return e.retry }

func (h refusingHistory) View(context.Context, uint64) (projections.View, func(), error) {
	return projections.View{}, nil, notServedErr{h.retry}
}
func (refusingHistory) ResolveTime(time.Time) (uint64, bool, error) { return 2, true, nil }

// TestHistoryNotServed: an index the history does not serve yet is a 503
// naming the parameter and saying why (the history is being indexed); one
// it never will is a 400 saying the oldest index served.
func TestHistoryNotServed(t *testing.T) {
	d := startAgent(t)
	api, err := httpapi.New(httpapi.Config{Node: d.Node(), FSM: d.FSM(), Pipeline: d.Pipeline(), Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	for _, tc := range []struct {
		retry        bool
		param, field string
		status       int
		text         string
	}{
		{true, "at_index=2", "at_index", http.StatusServiceUnavailable, "being indexed"},
		{true, "at_time=2026-01-01T00:00:00Z", "at_time", http.StatusServiceUnavailable, "being indexed"},
		{false, "at_index=2", "at_index", http.StatusBadRequest, "the oldest index served is 5"},
	} {
		srv := httptest.NewServer(api.WithHistory(refusingHistory{tc.retry}))
		resp, err := http.Get(srv.URL + "/v1/namespaces?" + tc.param)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error, Field string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != tc.status || body.Field != tc.field || !strings.Contains(body.Error, tc.text) {
			t.Errorf("%s (retry %v): %d %+v; want %d naming %s, saying %q", tc.param, tc.retry, resp.StatusCode, body, tc.status, tc.field, tc.text)
		}
	}
}
