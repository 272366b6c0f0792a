package compat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/test/testagent"
)

// monitor opens Agent().Monitor with params and returns a function that
// waits for a line containing every string of want (failing the test
// after clientTimeout or when the stream ends) and returns it.
func monitor(t *testing.T, c *api.Client, params map[string]string) func(want ...string) string {
	t.Helper()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	frames, errCh := c.Agent().Monitor(stop, &api.QueryOptions{Params: params})
	if frames == nil {
		t.Fatalf("Monitor(%v): %v", params, <-errCh)
	}
	deadline := time.NewTimer(clientTimeout)
	t.Cleanup(func() { deadline.Stop() })
	return func(want ...string) string {
		t.Helper()
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					t.Fatalf("Monitor(%v) ended before %q: %v", params, want, <-errCh)
				}
				if line := string(f.Data); containsAll(line, want) {
					return line
				}
			case <-deadline.C:
				t.Fatalf("Monitor(%v): no line with %q within %v", params, want, clientTimeout)
			}
		}
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestAgentMonitorWithNomadClient streams a dev agent's log with the
// nomad/api client: the server's own log at debug (below the agent's
// level), in text or JSON, the client agent's through ?node_id, and a
// server named by ?server_id.
func TestAgentMonitorWithNomadClient(t *testing.T) {
	a, c, nodeID := startDevClient(t)

	// The agent logs at info to nowhere; a debug reader still gets its lines.
	server := monitor(t, c, map[string]string{"log_level": "debug"})
	debug := monitor(t, c, map[string]string{"log_level": "DEBUG"})
	asJSON := monitor(t, c, map[string]string{"log_level": "info", "log_json": "true"})
	node := monitor(t, c, map[string]string{"log_level": "debug", "node_id": nodeID[:8]})
	leader := monitor(t, c, map[string]string{"server_id": "leader"})
	self := monitor(t, c, map[string]string{"server_id": a.ID() + ".global"})

	testagent.Register(t, c, shellJob("service", "monitored", "while true; do sleep 0.1; done"))
	running := []string{`msg="running allocation"`, "job_id=monitored"} // the client role's line
	if line := server(running...); !strings.Contains(line, "level=INFO") {
		t.Errorf("server line = %q", line)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(asJSON(`"msg":"running allocation"`, `"job_id":"monitored"`)), &rec); err != nil || rec["level"] != "INFO" {
		t.Errorf("log_json line = %v, %v", rec, err)
	}
	debug("level=DEBUG", "job_id=monitored") // below the agent's own level
	node(running...)
	leader(running...)
	self(running...)

	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"log_level": "loud"}, "log_level"},
		{map[string]string{"node_id": "ffffffff"}, "404"},
		{map[string]string{"server_id": "nope"}, "404"},
		{map[string]string{"node_id": nodeID, "server_id": "leader"}, "node_id"},
	} {
		stop := make(chan struct{})
		frames, errCh := c.Agent().Monitor(stop, &api.QueryOptions{Params: tc.params})
		close(stop)
		if frames != nil {
			t.Errorf("Monitor(%v) streamed; want a refusal", tc.params)
			continue
		}
		if err := <-errCh; !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Monitor(%v) = %v; want it to name %s", tc.params, err, tc.want)
		}
	}
}
