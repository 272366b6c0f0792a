package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/nettest"
)

// A node's logs endpoint, proxied by the server: the request reaches the
// allocation's node with the full alloc id and the query, and its answer
// streams through as it is written. Unknown allocs are 404s; a node that
// is down, advertises no address or does not answer is a 503 or 502.
func TestClientFSLogsProxy(t *testing.T) {
	t.Parallel()
	d := startAgent(t)

	type seen struct{ path, query string }
	requests := make(chan seen, 1)
	release := make(chan struct{})
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- seen{r.URL.Path, r.URL.RawQuery}
		w.Header().Set("X-Ordo-Log-Offset", "7")
		io.WriteString(w, "first line\n")
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "second line\n")
	}))
	defer node.Close()
	defer close(release)

	closedAddr := nettest.ClosedAddr(t)

	reg := func(id, addr string) events.Node {
		return events.Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default", HTTPAddr: addr, Status: events.NodeStatusReady}
	}
	d.seed(t,
		&events.NodeRegistered{Node: reg("node-up", strings.TrimPrefix(node.URL, "http://"))},
		&events.NodeRegistered{Node: reg("node-noaddr", "")},
		&events.NodeRegistered{Node: reg("node-gone", closedAddr)},
		&events.NodeRegistered{Node: reg("node-down", strings.TrimPrefix(node.URL, "http://"))},
	)
	d.seed(t, &events.NodeStatusUpdated{ID: "node-down", Status: events.NodeStatusDown, MissedHeartbeat: true})
	d.seed(t, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{
		testAlloc("a1b2c3d4-0000-4000-8000-000000000001", "node-up", "web", "e1"),
		testAlloc("b1b2c3d4-0000-4000-8000-000000000002", "node-noaddr", "web", "e1"),
		testAlloc("c1b2c3d4-0000-4000-8000-000000000003", "node-gone", "web", "e1"),
		testAlloc("d1b2c3d4-0000-4000-8000-000000000004", "node-down", "web", "e1"),
	}})

	// Streaming through, by prefix.
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.base+"/v1/client/fs/logs/a1b2c3?task=web&type=stderr&follow=true&plain=true", nil)
	resp, err := d.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := <-requests
	if got.path != "/v1/client/fs/logs/a1b2c3d4-0000-4000-8000-000000000001" || got.query != "task=web&type=stderr&follow=true&plain=true" {
		t.Fatalf("node got %+v", got)
	}
	if resp.StatusCode != 200 || resp.Header.Get("X-Ordo-Log-Offset") != "7" {
		t.Fatalf("proxied answer %d %v", resp.StatusCode, resp.Header)
	}
	br := bufio.NewReader(resp.Body)
	// The first line arrives while the node still holds the second back.
	if line, err := br.ReadString('\n'); err != nil || line != "first line\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	release <- struct{}{}
	if rest, err := io.ReadAll(br); err != nil || string(rest) != "second line\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}

	for _, tc := range []struct {
		id     string
		status int
		says   string
	}{
		{"e1b2c3d4-0000-4000-8000-000000000009", 404, "not found"},
		{"b1b2c3d4-0000-4000-8000-000000000002", 502, "advertises no HTTP address"},
		{"c1b2c3d4", 502, closedAddr},
		{"d1b2c3d4", 503, "is down"},
	} {
		r := d.do(t, "GET", "/v1/client/fs/logs/"+tc.id+"?task=web", nil)
		if r.status != tc.status {
			t.Fatalf("%s: %d %s, want %d", tc.id, r.status, r.body, tc.status)
		}
		if e := r.apiError(t); !strings.Contains(e.Error, tc.says) {
			t.Fatalf("%s: error %q does not say %q", tc.id, e.Error, tc.says)
		}
	}
}
