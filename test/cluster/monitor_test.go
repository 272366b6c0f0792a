package cluster

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/test/testagent"
)

// TestMonitorServerID: GET /v1/agent/monitor?server_id on one server
// streams another server's log (forwarded to it), by raft id or as
// "leader", read with the nomad/api client.
func TestMonitorServerID(t *testing.T) {
	c := testagent.NewClient(10 * time.Second)
	defer c.Close()
	all := []*server{startServer(t, "a", nil)}
	for _, name := range []string{"b", "c"} {
		all = append(all, startServer(t, name, []string{all[0].HTTP}))
	}
	waitForCluster(t, c, all)
	leader := testagent.WaitForLeader(t, all)
	var via, other *server // two followers: one asked, one monitored
	for _, s := range all {
		switch {
		case s == leader:
		case via == nil:
			via = s
		default:
			other = s
		}
	}
	nc, err := api.NewClient(&api.Config{Address: "http://" + via.HTTP})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		serverID string
		target   *server
	}{
		{other.A.ID(), other},
		{"leader", leader},
	} {
		stop := make(chan struct{})
		frames, errCh := nc.Agent().Monitor(stop, &api.QueryOptions{Params: map[string]string{"log_level": "debug", "server_id": tc.serverID}})
		if frames == nil {
			t.Fatalf("Monitor(server_id=%s): %v", tc.serverID, <-errCh)
		}
		// The target logs at debug when an event stream opens on it.
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+tc.target.HTTP+"/v1/event/stream", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{`msg="event stream opened"`, "server=" + tc.target.A.ID()}
		deadline := time.NewTimer(timeout)
	wait:
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					t.Fatalf("Monitor(server_id=%s) ended: %v", tc.serverID, <-errCh)
				}
				if l := string(f.Data); strings.Contains(l, want[0]) && strings.Contains(l, want[1]) {
					break wait
				}
			case <-deadline.C:
				t.Fatalf("Monitor(server_id=%s): no line with %q", tc.serverID, want)
			}
		}
		deadline.Stop()
		cancel()
		resp.Body.Close()
		close(stop)
	}
}
