package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/waittest"
)

// testTimeout bounds every wait in these tests.
const testTimeout = 15 * time.Second

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// devAgent is a dev agent serving on 127.0.0.1 with a client for it.
type devAgent struct {
	*agent.Agent
	base   string
	client *http.Client
}

// startAgent starts a dev agent and returns once it leads and has
// bootstrapped (the leader's start-up writes are all in the log).
func startAgent(t testing.TB) *devAgent {
	t.Helper()
	return startAgentWith(t, func(*agent.Config) {})
}

// waitFor waits until cond holds on the state store, re-checking after
// every applied entry, or fails the test at the deadline.
func (d *devAgent) waitFor(t testing.TB, what string, cond func(v projections.View) bool) {
	t.Helper()
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	for {
		_, wake := d.FSM().Notifier().Applied()
		snap := d.Store().Snapshot()
		ok := cond(projections.NewView(snap))
		snap.Close()
		if ok {
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitApplied waits until the FSM has applied index.
func (d *devAgent) waitApplied(t testing.TB, index uint64) {
	t.Helper()
	d.waitFor(t, "index "+strconv.FormatUint(index, 10), func(projections.View) bool {
		return d.FSM().Applied() >= index
	})
}

// archiveLen returns how many events the archive holds.
func (d *devAgent) archiveLen(t testing.TB) uint64 {
	t.Helper()
	n, err := archive.Len(d.Store())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// gauge returns the value of an unlabelled gauge in the agent's registry.
func (d *devAgent) gauge(t testing.TB, name string) float64 {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// waitGauge polls a gauge until it reads want, with a deadline: a gauge
// has no channel to wait on.
func (d *devAgent) waitGauge(t testing.TB, name string, want float64) {
	t.Helper()
	if !waittest.Poll(testTimeout, func() bool { return d.gauge(t, name) == want }) {
		t.Fatalf("%s = %v, want %v", name, d.gauge(t, name), want)
	}
}

// response is a read HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) index(t testing.TB) uint64 {
	t.Helper()
	v := r.header.Get("X-Nomad-Index")
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("X-Nomad-Index %q: %v", v, err)
	}
	return n
}

func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// apiError is the JSON body of every error.
type apiError struct {
	Error  string
	Field  string
	Reason string
	Status int
}

// apiError decodes the response as an error body and checks it is JSON
// with the response's status.
func (r response) apiError(t testing.TB) apiError {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q, want application/json (body %q)", ct, r.body)
	}
	var e apiError
	r.decode(t, &e)
	if e.Error == "" || e.Status != r.status {
		t.Fatalf("error body %s for status %d", r.body, r.status)
	}
	return e
}

// do sends a request to the agent and reads the whole response.
func (d *devAgent) do(t testing.TB, method, path string, body io.Reader, header ...string) response {
	t.Helper()
	return do(t, d.client, d.base, method, path, body, header...)
}

func do(t testing.TB, c *http.Client, base, method, path string, body io.Reader, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// putNamespace applies a namespace over HTTP and returns the write's index.
func (d *devAgent) putNamespace(t testing.TB, name, desc string) uint64 {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"Name": name, "Description": desc})
	r := d.do(t, "PUT", "/v1/namespace/"+name, strings.NewReader(string(body)))
	if r.status != http.StatusOK {
		t.Fatalf("PUT namespace %s: %d %s", name, r.status, r.body)
	}
	var out struct {
		Index     uint64
		Duplicate bool
	}
	r.decode(t, &out)
	if out.Index == 0 || out.Index != r.index(t) {
		t.Fatalf("PUT namespace %s: body %s, X-Nomad-Index %s", name, r.body, r.header.Get("X-Nomad-Index"))
	}
	return out.Index
}

// newAPI builds a second httpapi.Server over the agent's node, FSM and
// pipeline, for settings agent.Config does not expose.
func newAPI(t testing.TB, d *devAgent, cfg httpapi.Config) *httpapi.Server {
	t.Helper()
	cfg.Node, cfg.FSM, cfg.Pipeline, cfg.Logger = d.Node(), d.FSM(), d.Pipeline(), discard
	api, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	return api
}

// serve serves h on 127.0.0.1 until the test ends and returns its base URL.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// stream is an open event stream (/v1/event/stream or
// /v1/operator/log/stream) whose lines arrive on a channel.
type stream struct {
	lines  chan string
	errc   chan error
	cancel context.CancelFunc
}

func openStream(t testing.TB, url string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("stream %s: %d %s", url, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("stream Content-Type %q", ct)
	}
	s := &stream{lines: make(chan string), errc: make(chan error, 1), cancel: cancel}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			select {
			case s.lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		s.errc <- sc.Err()
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}

// next returns the next line, failing the test at the deadline.
func (s *stream) next(t testing.TB) string {
	t.Helper()
	select {
	case l := <-s.lines:
		return l
	case err := <-s.errc:
		t.Fatalf("stream ended: %v", err)
	case <-time.After(testTimeout):
		t.Fatal("timed out waiting for the event stream")
	}
	return ""
}

type frame struct {
	Index  uint64
	Events []httpapi.Event
}

// nextFrame returns the next non-heartbeat frame.
func (s *stream) nextFrame(t testing.TB) frame {
	t.Helper()
	for {
		l := s.next(t)
		if l == "{}" {
			continue
		}
		var f frame
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("frame %q: %v", l, err)
		}
		if f.Index == 0 || len(f.Events) == 0 {
			t.Fatalf("empty frame %q", l)
		}
		return f
	}
}
