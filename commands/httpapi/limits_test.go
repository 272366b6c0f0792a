package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
	"github.com/ordoplane/ordo/commands/httpapi/httplimit/httplimittest"
)

// startLimitedAgent starts a dev agent whose API has small limits.
func startLimitedAgent(t *testing.T, lim httplimit.Config) *devAgent {
	t.Helper()
	return startAgentWith(t, func(c *agent.Config) { c.HTTP = lim })
}

// TestSlowBodiesAreCutOff (issue 31): connections trickling a body are
// answered and closed once the body deadline passes, nothing they sent
// reaches the log, and a normal client is served meanwhile.
func TestSlowBodiesAreCutOff(t *testing.T) {
	t.Parallel()
	d := startLimitedAgent(t, httplimit.Config{BodyTimeout: 300 * time.Millisecond})
	before := d.archiveLen(t)
	var slow []<-chan string
	for range 20 {
		slow = append(slow, httplimittest.Trickle(t, strings.TrimPrefix(d.base, "http://"),
			"PUT /v1/namespace/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
			' ', 100*time.Millisecond, testTimeout))
	}
	for i := range 5 {
		r := d.do(t, "GET", "/v1/namespaces", nil)
		if r.status != 200 {
			t.Fatalf("normal read %d among slow writers: %d %s", i, r.status, r.body)
		}
	}
	for i, ch := range slow {
		got := <-ch
		if got == "still open at the test deadline" {
			t.Fatalf("slow connection %d was not cut off", i)
		}
		if got != "" && !strings.HasPrefix(got, "HTTP/1.1 4") {
			t.Fatalf("slow connection %d was answered %q", i, got)
		}
	}
	if d.archiveLen(t) != before {
		t.Fatal("a cut-off body reached the log")
	}
	if n := d.counter(t, "ordo_http_body_timeouts_total"); n != 20 {
		t.Fatalf("ordo_http_body_timeouts_total = %v, want 20", n)
	}
	if r := d.do(t, "GET", "/v1/namespace/slow", nil); r.status != 404 {
		t.Fatalf("namespace of a cut-off body: %d %s", r.status, r.body)
	}
}

// TestLongAnswersOutlastTheWriteTimeout: a blocking query waiting longer
// than the write timeout is answered, and the event stream delivers an
// event written after the write timeout passed.
func TestLongAnswersOutlastTheWriteTimeout(t *testing.T) {
	t.Parallel()
	const wt = 300 * time.Millisecond
	d := startLimitedAgent(t, httplimit.Config{WriteTimeout: wt})

	// The stream, opened before and read after the write timeout.
	resp, err := d.client.Get(d.base + "/v1/event/stream?topic=Namespace")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	// A blocking query on a table nothing writes: answered when its wait
	// (3 write timeouts) is up.
	r := d.do(t, "GET", "/v1/namespaces", nil)
	idx := r.index(t)
	r = d.do(t, "GET", fmt.Sprintf("/v1/namespaces?index=%d&wait=%dms", idx, (3*wt).Milliseconds()), nil)
	if r.status != 200 || r.index(t) != idx {
		t.Fatalf("blocking query past the write timeout: %d %s", r.status, r.body)
	}

	// The write timeout has passed for the stream too: it still delivers.
	d.putNamespace(t, "late", "")
	found := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"late"`) {
				found <- nil
				return
			}
		}
		found <- fmt.Errorf("stream ended: %v", sc.Err())
	}()
	select {
	case err := <-found:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the stream did not deliver the namespace written after the write timeout")
	}
}

// TestConnectionsPerClient: past http_max_conns_per_client, a connection
// from the same address is refused with 429; once one closes, requests
// are served again.
func TestConnectionsPerClient(t *testing.T) {
	t.Parallel()
	d := startLimitedAgent(t, httplimit.Config{MaxConnsPerClient: 3})
	d.client.CloseIdleConnections()
	d.waitGauge(t, "ordo_http_conns_open", 0)
	addr := strings.TrimPrefix(d.base, "http://")
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		held = append(held, c)
	}
	d.waitGauge(t, "ordo_http_conns_open", 3)
	once := &http.Client{Timeout: testTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 3 {
		resp, err := once.Get(d.base + "/v1/namespaces")
		if err != nil {
			continue // refused: closed before the answer could be read
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("request %d past the cap: %d %s", i, resp.StatusCode, b)
		}
	}
	if got := d.counter(t, "ordo_http_conns_refused_total"); got < 3 {
		t.Fatalf("ordo_http_conns_refused_total = %v, want at least 3", got)
	}
	held[0].Close()
	d.waitGauge(t, "ordo_http_conns_open", 2)
	resp, err := once.Get(d.base + "/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("request under the cap: %d", resp.StatusCode)
	}
}

// counter returns the value of the one counter called name.
func (d *devAgent) counter(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
