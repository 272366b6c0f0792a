package serverapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/events"
)

func quiet() api.Option {
	return api.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Failover between servers and api.ErrNoServers are api.Client's
// (api/client_test.go).

func TestHeartbeatNotFound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 404, map[string]any{"Error": `node "n1" not found`, "Status": 404})
	}))
	defer srv.Close()
	c, _ := serverapi.New([]string{srv.URL}, quiet())
	_, err := c.Heartbeat(context.Background(), "n1", "ready")
	if !errors.Is(err, serverapi.ErrNodeNotFound) {
		t.Fatalf("err %v, want ErrNodeNotFound", err)
	}
	if errors.Is(err, api.ErrNoServers) {
		t.Fatal("a 404 is an answer")
	}
}

func TestUpdateAllocsRefusedAlloc(t *testing.T) {
	var got map[string][]events.AllocClientUpdate
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		writeJSON(w, 400, map[string]any{"Error": "invalid", "Field": "Allocs[1].ID", "Reason": "does not exist", "Status": 400})
	}))
	defer srv.Close()
	c, _ := serverapi.New([]string{srv.URL}, quiet())
	_, err := c.UpdateAllocs(context.Background(), "n1", []events.AllocClientUpdate{{ID: "a"}, {ID: "b"}})
	if i, reason, ok := serverapi.AllocIndex(err); !ok || i != 1 || reason != "does not exist" {
		t.Errorf("AllocIndex %d %q %v, want 1", i, reason, ok)
	}
	if len(got["Allocs"]) != 2 {
		t.Errorf("body %+v", got)
	}
	// An empty update still sends a list (the N1 marker alone).
	if _, err := c.UpdateAllocs(context.Background(), "n1", nil); err == nil {
		t.Fatal("want the 400 again")
	}
	if got["Allocs"] == nil {
		t.Error("nil updates sent as null")
	}
}

func TestAllocationsBlockingQuery(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/client/n1/allocations" || r.URL.Query().Get("index") != "5" || r.URL.Query().Get("wait") != "2s" {
			t.Errorf("request %s", r.URL)
		}
		w.Header().Set("X-Nomad-Index", "9")
		writeJSON(w, 200, []map[string]any{{
			"ID": "a1", "Namespace": "default", "JobID": "web", "JobVersion": 2, "TaskGroup": "web",
			"DesiredStatus": "stop", "DesiredTransition": map[string]any{"NoShutdownDelay": true},
			"DeploymentID": "d1", "DeploymentStatus": map[string]any{"Canary": true, "Timestamp": "0001-01-01T00:00:00Z"},
			"TaskStates":       map[string]any{"web": map[string]any{"State": "running", "StartedAt": "2026-01-01T00:00:00Z"}},
			"AllocModifyIndex": 8,
		}})
	}))
	defer srv.Close()
	c, _ := serverapi.New([]string{srv.URL}, quiet())
	list, index, err := c.Allocations(context.Background(), "n1", 5, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if index != 9 || len(list) != 1 {
		t.Fatalf("index %d, %d allocs", index, len(list))
	}
	a := list[0]
	if a.ID != "a1" || a.JobVersion != 2 || !a.ServerTerminal() || a.DesiredTransition.NoShutdownDelay == nil ||
		!*a.DesiredTransition.NoShutdownDelay || a.AllocModifyIndex != 8 || a.DeploymentStatus == nil ||
		!a.DeploymentStatus.Canary || a.DeploymentStatus.Timestamp != 0 {
		t.Errorf("alloc %+v", a)
	}
}

func TestJobVersion(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("namespace") != "prod" {
			t.Errorf("namespace %q", r.URL.Query().Get("namespace"))
		}
		switch r.URL.EscapedPath() {
		case "/v1/job/batch%2Fdispatch-1":
			writeJSON(w, 200, events.Job{ID: "batch/dispatch-1", Version: 3})
		case "/v1/job/batch%2Fdispatch-1/versions":
			writeJSON(w, 200, map[string]any{"Versions": []events.Job{{ID: "batch/dispatch-1", Version: 3}, {ID: "batch/dispatch-1", Version: 2, Name: "old"}}})
		default:
			t.Errorf("path %s", r.URL.EscapedPath())
		}
	}))
	defer srv.Close()
	c, _ := serverapi.New([]string{srv.URL}, quiet())
	ctx := context.Background()
	if j, err := c.Job(ctx, "prod", "batch/dispatch-1", 3); err != nil || j.Version != 3 {
		t.Fatalf("current: %+v %v", j, err)
	}
	if j, err := c.Job(ctx, "prod", "batch/dispatch-1", 2); err != nil || j.Name != "old" {
		t.Fatalf("old: %+v %v", j, err)
	}
	_, err := c.Job(ctx, "prod", "batch/dispatch-1", 1)
	if !api.IsNotFound(err) {
		t.Fatalf("missing version: %v", err)
	}
}
