package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/export"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

// refusing is a Proposer that appends nothing.
type refusing struct{}

func (refusing) Append(context.Context, []byte) (any, uint64, error) {
	return nil, 0, errors.New("refusing proposer reached")
}

// readOnlyServer serves a store filled through the FSM (a server entry,
// three namespaces, three evals) read-only, with no raft node; tweak changes the config.
func readOnlyServer(t *testing.T, tweak func(*httpapi.Config)) *httptest.Server {
	t.Helper()
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	pt.ApplyOne(t, fsm, 1, pt.Entry(t, "c1", &events.ServerRegistered{ID: "s1", RaftAddr: "r", HTTPAddr: "h"}))
	for i, name := range []string{"payments", "billing", "search"} {
		pt.ApplyOne(t, fsm, uint64(i+2), pt.Entry(t, "ns-"+name, &events.NamespaceUpserted{Namespace: events.Namespace{Name: name}}))
	}
	ev := func(id string) events.Evaluation {
		return events.Evaluation{ID: id, Namespace: "default", Type: "service", JobID: "web", Status: events.EvalStatusComplete}
	}
	pt.ApplyOne(t, fsm, 5, pt.Entry(t, "evals", &events.EvalsUpserted{Evals: []events.Evaluation{ev("eval-aa-1"), ev("eval-aa-2"), ev("eval-bb-1")}}))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: refusing{}, Store: store, Applied: fsm.Applied, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.Config{FSM: fsm, Pipeline: p, Logger: quiet, ReadOnly: "replay test",
		Self: httpapi.Self{ID: "replay", Name: "replay"}}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv
}

func call(t *testing.T, method, url, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestReadOnlyServer: a server with no raft node answers reads locally as
// its own leader, refuses every write with 409 before the pipeline, and
// lets through the writes that change nothing.
func TestReadOnlyServer(t *testing.T) {
	srv := readOnlyServer(t, nil)
	for _, tc := range []struct {
		method, path, body string
		status             int
		says               string
	}{
		{"GET", "/v1/namespaces", "", 200, `"billing"`},
		{"GET", "/v1/namespace/search", "", 200, `"search"`},
		{"GET", "/v1/namespaces?index=1&wait=1s", "", 200, `"payments"`},
		{"GET", "/v1/status/leader", "", 200, ``},
		{"GET", "/v1/status/peers", "", 200, ``},
		{"GET", "/v1/agent/health", "", 200, `"ok":true`},
		{"GET", "/v1/agent/self", "", 200, `"read_only":"replay test"`},
		{"GET", "/v1/operator/raft/configuration", "", 200, `"ID":"replay"`},
		{"GET", "/v1/operator/log?from=1", "", 200, `"NamespaceUpserted"`},
		{"PUT", "/v1/namespace/drill", `{}`, 409, "this server is read-only (replay test): PUT /v1/namespace/drill would change the cluster"},
		{"DELETE", "/v1/namespace/search", ``, 409, "read-only"},
		{"PUT", "/v1/client/register", `{}`, 409, "read-only"},
		{"POST", "/v1/operator/raft/join", `{}`, 409, "read-only"},
		// Planning changes nothing: it passes (and this server has no planner).
		{"POST", "/v1/job/web/plan", `{"Job":{"ID":"web","Name":"web","Type":"batch","TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"}}]}]}}`, 501, "does not plan"},
		{"GET", "/v1/debug/reschedule/e-1", "", 501, "does not re-run"},
		{"GET", "/v1/operator/log/export", "", 501, "does not export"},
	} {
		code, body, _ := call(t, tc.method, srv.URL+tc.path, tc.body)
		if code != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s: %d %s; want %d saying %q", tc.method, tc.path, code, body, tc.status, tc.says)
		}
	}
	if _, err := httpapi.New(httpapi.Config{FSM: &fsm.FSM{}, Pipeline: &commands.Pipeline{}}); err == nil {
		t.Error("a server with no raft node that is not read-only")
	}
}

// TestExportEndpoint: GET /v1/operator/log/export streams a history file
// that checks out, named for its range; bad ranges answer 400 before any
// byte; a failure before the first byte answers JSON.
func TestExportEndpoint(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := readOnlyServer(t, func(c *httpapi.Config) {
		c.Exporter = export.ForAPI("s-export", "test", t.TempDir(), clocktest.NewClock(now))
	})
	code, body, hdr := call(t, "GET", srv.URL+"/v1/operator/log/export?from=2&to=3", "")
	if code != 200 || hdr.Get("Content-Type") != "application/octet-stream" || hdr.Get("X-Nomad-Index") != "5" ||
		hdr.Get("Content-Disposition") != `attachment; filename="ordo-2-3.olog"` {
		t.Fatalf("export: %d %v", code, hdr)
	}
	sum, err := export.Verify(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	h := sum.Header
	if h.ClusterID != "s1" || h.Server != "s-export" || h.FirstIndex != 2 || h.LastIndex != 3 || h.Events != 2 ||
		h.StateIndex != 1 || h.StateRows == 0 || !h.Created.Equal(now) {
		t.Errorf("header %+v", h)
	}
	code, body, _ = call(t, "GET", srv.URL+"/v1/operator/log/export?from=2&state=false", "")
	if sum, err := export.Verify(strings.NewReader(body)); code != 200 || err != nil || sum.Header.StateIndex != 0 || sum.Events != 4 {
		t.Errorf("export without state: %d %v %+v", code, err, sum)
	}
	for _, tc := range []struct{ query, field string }{
		{"from=x", "from"}, {"to=-1", "to"}, {"from=3&to=2", "to"}, {"from=6", "from"}, {"state=maybe", "state"},
	} {
		code, body, hdr := call(t, "GET", srv.URL+"/v1/operator/log/export?"+tc.query, "")
		var e struct{ Field string }
		json.Unmarshal([]byte(body), &e)
		if code != 400 || e.Field != tc.field || hdr.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.query, code, body, tc.field)
		}
	}
	failing := readOnlyServer(t, func(c *httpapi.Config) {
		c.Exporter = exporterFunc(func(io.Writer, kv.Reader, uint64, uint64, bool) error { return fmt.Errorf("disk on fire") })
	})
	if code, body, _ := call(t, "GET", failing.URL+"/v1/operator/log/export", ""); code != 500 || !strings.Contains(body, "disk on fire") {
		t.Errorf("a failing exporter: %d %s", code, body)
	}
}

// TestRescheduleEndpoint: ids resolve by prefix before the hook is asked;
// ambiguous and unknown ids answer 400 and 404.
func TestRescheduleEndpoint(t *testing.T) {
	var asked []string
	srv := readOnlyServer(t, func(c *httpapi.Config) {
		c.Rescheduler = reschedulerFunc(func(src kv.Reader, evalID string) (any, error) {
			asked = append(asked, evalID)
			return map[string]any{"EvalID": evalID, "Equal": true}, nil
		})
	})
	if code, body, _ := call(t, "GET", srv.URL+"/v1/debug/reschedule/eval-b", ""); code != 200 || !strings.Contains(body, `"EvalID":"eval-bb-1"`) {
		t.Errorf("prefix: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", srv.URL+"/v1/debug/reschedule/eval-aa", ""); code != 400 || !strings.Contains(body, "matches several evaluations") {
		t.Errorf("ambiguous prefix: %d %s", code, body)
	}
	if code, body, _ := call(t, "GET", srv.URL+"/v1/debug/reschedule/abc", ""); code != 404 || !strings.Contains(body, `evaluation \"abc\" not found`) {
		t.Errorf("unknown eval: %d %s", code, body)
	}
	if fmt.Sprint(asked) != "[eval-bb-1]" {
		t.Errorf("the hook was asked about %v", asked)
	}
}
