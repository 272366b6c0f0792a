package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMonitorNeedsAgentRead: with ACLs on, GET /v1/agent/monitor answers
// a token with agent read, and streams the agent's lines to it (here an
// event stream's opening, logged at debug); without it, 403.
func TestMonitorNeedsAgentRead(t *testing.T) {
	g := startACLAgent(t)
	var boot tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &boot)
	mgmt := boot.SecretID
	g.policy(t, mgmt, "agent-read", `agent { policy = "read" }`)
	g.policy(t, mgmt, "agent-deny", `agent { policy = "deny" }`)
	reader, denied := g.token(t, mgmt, "reader", "agent-read"), g.token(t, mgmt, "denied", "agent-deny")
	for _, token := range []string{"", denied.SecretID} {
		if st := g.call(t, "GET", "/v1/agent/monitor", token, nil); st != http.StatusForbidden {
			t.Errorf("monitor with token %q: %d, want 403", token, st)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", g.base+"/v1/agent/monitor?log_level=debug", nil)
	req.Header.Set("X-Nomad-Token", reader.SecretID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("monitor with agent read: %d", resp.StatusCode)
	}
	// The answer's headers come once the reader is subscribed: a line
	// logged from now on reaches it, as an event stream's opening.
	sctx, stop := context.WithCancel(ctx)
	sreq, _ := http.NewRequestWithContext(sctx, "GET", g.base+"/v1/event/stream", nil)
	sreq.Header.Set("X-Nomad-Token", mgmt)
	sresp, err := http.DefaultClient.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	defer stop()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var f struct{ Data []byte }
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("frame %q: %v", sc.Bytes(), err)
		}
		if strings.Contains(string(f.Data), `msg="event stream opened"`) {
			return
		}
	}
	t.Fatalf("stream ended without the line: %v", sc.Err())
}
