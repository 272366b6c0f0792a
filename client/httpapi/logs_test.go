package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/httpapi"
	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/waittest"
)

const testTimeout = 20 * time.Second

// fakeAllocs is the client's allocations: log files under dir, per alloc.
type fakeAllocs struct {
	dir    string
	allocs map[string]*fakeAlloc
}

type fakeAlloc struct {
	dir   string
	tasks []string
	done  atomic.Bool
}

func (f *fakeAllocs) Alloc(id string) (httpapi.Alloc, bool) {
	a, ok := f.allocs[id]
	return a, ok
}

func (a *fakeAlloc) Tasks() []string { return a.tasks }
func (a *fakeAlloc) LogPath(task, stream string) string {
	return filepath.Join(a.dir, "alloc", "logs", task+"."+stream)
}
func (a *fakeAlloc) TaskDone(string) bool { return a.done.Load() }
func (a *fakeAlloc) Status() events.AllocClientUpdate {
	return events.AllocClientUpdate{ClientStatus: events.AllocClientRunning}
}

const poll = 250 * time.Millisecond

// setup serves the API of alloc a1 with tasks web and side, and a2 with
// the task only, and returns its base URL, a1 and the clock.
func setup(t *testing.T) (string, *fakeAlloc, *clocktest.Clock) {
	t.Helper()
	dir := t.TempDir()
	a := &fakeAlloc{dir: filepath.Join(dir, "a1"), tasks: []string{"side", "web"}}
	if err := os.MkdirAll(filepath.Join(a.dir, "alloc", "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	solo := &fakeAlloc{dir: filepath.Join(dir, "a2"), tasks: []string{"only"}}
	if err := os.MkdirAll(filepath.Join(solo.dir, "alloc", "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	s, err := httpapi.New(httpapi.Config{Allocs: &fakeAllocs{allocs: map[string]*fakeAlloc{"a1": a, "a2": solo}},
		Clock: clk, PollInterval: poll, HeartbeatInterval: 2 * poll, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL, a, clk
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// rotate does what the exec driver does to a full log file, keeping
// three files.
func rotate(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(driver.RotatedPath(path, 2)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.Rename(driver.RotatedPath(path, 1), driver.RotatedPath(path, 2)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	write(t, driver.RotatedPath(path, 1), string(b))
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
}

// get sends a request; the body is the caller's to read and close.
func get(t *testing.T, url string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The stream is the rotated files, oldest first, then the current file;
// other files of the directory are not part of it. Frames decode as
// nomad/api's StreamFrame, naming the file and the offset in it.
func TestLogsRotationOrder(t *testing.T) {
	base, a, _ := setup(t)
	cur := a.LogPath("web", "stdout")
	write(t, driver.RotatedPath(cur, 3), "three\n")
	write(t, driver.RotatedPath(cur, 2), "two\n")
	write(t, driver.RotatedPath(cur, 1), "one\n")
	write(t, cur, "now\n")
	write(t, cur+".01", "not a rotation\n")
	write(t, cur+".bak", "not a rotation\n")
	write(t, a.LogPath("web", "stderr"), "err\n")
	write(t, a.LogPath("webby", "stdout"), "another task\n")

	resp := get(t, base+"/v1/client/fs/logs/a1?task=web&type=stdout&plain=true")
	if got := readAll(t, resp); resp.StatusCode != 200 || got != "three\ntwo\none\nnow\n" {
		t.Fatalf("plain: %d %q", resp.StatusCode, got)
	}
	if h := resp.Header.Get(httpapi.OffsetHeader); h != "0" {
		t.Fatalf("offset header %q", h)
	}

	resp = get(t, base+"/v1/client/fs/logs/a1?task=web&type=stdout&origin=start&offset=0")
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	dec := json.NewDecoder(resp.Body)
	var got []string
	for {
		var f api.StreamFrame
		err := dec.Decode(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f.File+":"+string(f.Data)+":"+strconv.FormatInt(f.Offset, 10))
	}
	want := []string{"alloc/logs/web.stdout.3:three\n:6", "alloc/logs/web.stdout.2:two\n:4",
		"alloc/logs/web.stdout.1:one\n:4", "alloc/logs/web.stdout:now\n:4"}
	if !slices.Equal(got, want) {
		t.Fatalf("frames %q, want %q", got, want)
	}

	resp = get(t, base+"/v1/client/fs/logs/a1?task=web&type=stderr&plain=true")
	if got := readAll(t, resp); got != "err\n" {
		t.Fatalf("stderr %q", got)
	}
}

// offset counts over the whole stream, from its start or its end; the
// answer says where it begins.
func TestLogsOffsets(t *testing.T) {
	base, a, _ := setup(t)
	cur := a.LogPath("web", "stdout")
	write(t, driver.RotatedPath(cur, 2), "0123")
	write(t, driver.RotatedPath(cur, 1), "4567")
	write(t, cur, "89")
	for _, tc := range []struct {
		query, at, want string
	}{
		{"", "0", "0123456789"},
		{"&origin=start&offset=5", "5", "56789"},
		{"&offset=4", "4", "456789"},
		{"&origin=start&offset=42", "10", ""},
		{"&origin=end&offset=0", "10", ""},
		{"&origin=end&offset=3", "7", "789"},
		{"&origin=end&offset=7", "3", "3456789"},
		{"&origin=end&offset=99", "0", "0123456789"},
	} {
		resp := get(t, base+"/v1/client/fs/logs/a1?task=web&plain=true"+tc.query)
		if got := readAll(t, resp); resp.StatusCode != 200 || got != tc.want || resp.Header.Get(httpapi.OffsetHeader) != tc.at {
			t.Errorf("%s: %d at %s %q, want at %s %q", tc.query, resp.StatusCode, resp.Header.Get(httpapi.OffsetHeader), got, tc.at, tc.want)
		}
	}
}

// Following, the stream picks up what the task appends at each poll of
// the clock, through a rotation, and ends once the task is done and all
// it wrote was sent.
func TestLogsFollow(t *testing.T) {
	base, a, clk := setup(t)
	cur := a.LogPath("web", "stdout")
	write(t, cur, "one\n")
	resp := get(t, base+"/v1/client/fs/logs/a1?task=web&follow=true&plain=true")
	r := bufio.NewReader(resp.Body)
	line := func(want string) {
		t.Helper()
		got, err := r.ReadString('\n')
		if err != nil || got != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	line("one\n")

	clk.BlockUntilWaiters(1)
	appendTo(t, cur, "two\n")
	clk.Advance(poll)
	line("two\n")

	clk.BlockUntilWaiters(1)
	appendTo(t, cur, "three\n")
	rotate(t, cur) // "one two three" go to .1; nothing is sent twice
	appendTo(t, cur, "four\n")
	clk.Advance(poll)
	line("three\n")
	line("four\n")

	clk.BlockUntilWaiters(1)
	appendTo(t, cur, "five\n")
	a.done.Store(true)
	clk.Advance(poll)
	line("five\n")
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("after the task ended: %q, %v", rest, err)
	}
}

// A followed stream of frames sends heartbeats while idle, and new data
// in frames.
func TestLogsFollowFrames(t *testing.T) {
	base, a, clk := setup(t)
	cur := filepath.Join(filepath.Dir(a.dir), "a2", "alloc", "logs", "only.stderr")
	resp := get(t, base+"/v1/client/fs/logs/a2?type=stderr&follow=true") // the only task
	dec := json.NewDecoder(resp.Body)
	next := func() api.StreamFrame {
		t.Helper()
		var f api.StreamFrame
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for range 2 { // idle for HeartbeatInterval
		clk.BlockUntilWaiters(1)
		clk.Advance(poll)
	}
	if f := next(); !f.IsHeartbeat() {
		t.Fatalf("frame %+v, want a heartbeat", f)
	}
	clk.BlockUntilWaiters(1)
	appendTo(t, cur, "boom\n")
	clk.Advance(poll)
	if f := next(); string(f.Data) != "boom\n" || f.File != "alloc/logs/only.stderr" || f.Offset != 5 {
		t.Fatalf("frame %+v", f)
	}
}

// The follow loop ends when the caller goes away.
func TestLogsFollowEndsWithTheCaller(t *testing.T) {
	base, a, clk := setup(t)
	write(t, a.LogPath("web", "stdout"), "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/client/fs/logs/a1?task=web&follow=true&plain=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || b != "x\n" {
		t.Fatal(b, err)
	}
	clk.BlockUntilWaiters(1)
	cancel()
	resp.Body.Close()
	// The handler stops waiting on the clock (httptest's Close, at
	// cleanup, waits for it too).
	waittest.For(t, testTimeout, "the stream to stop polling after the caller left", func() bool { return clk.Waiters() == 0 })
}

// Unknown allocs and tasks are 404s; bad parameters 400s naming them.
func TestLogsErrors(t *testing.T) {
	base, _, _ := setup(t)
	for _, tc := range []struct {
		path   string
		status int
		field  string
		says   string
	}{
		{"/v1/client/fs/logs/nope?task=web", 404, "", `allocation "nope" not found`},
		{"/v1/client/fs/logs/a1?task=nope", 404, "", `task "nope" not found`},
		{"/v1/client/fs/logs/a1", 400, "task", "side, web"},
		{"/v1/client/fs/logs/a1?task=web&type=stdlog", 400, "type", "stdlog"},
		{"/v1/client/fs/logs/a1?task=web&origin=middle", 400, "origin", "middle"},
		{"/v1/client/fs/logs/a1?task=web&offset=-1", 400, "offset", "-1"},
		{"/v1/client/fs/logs/a1?task=web&offset=ten", 400, "offset", "ten"},
		{"/v1/client/fs/logs/a1?task=web&follow=yes", 400, "follow", "yes"},
		{"/v1/client/fs/logs/a1?task=web&plain=2", 400, "plain", "2"},
		{"/v1/client/fs/nope", 404, "", "no such endpoint"},
	} {
		resp := get(t, base+tc.path)
		var e struct {
			Error, Field, Reason string
			Status               int
		}
		body := readAll(t, resp)
		if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != tc.status || e.Status != tc.status ||
			e.Field != tc.field || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s: %d %s, want %d naming %q saying %q", tc.path, resp.StatusCode, body, tc.status, tc.field, tc.says)
		}
	}
}

// Serve answers until its context ends, then ends the open streams and
// returns once they have.
func TestServeEndsStreams(t *testing.T) {
	dir := t.TempDir()
	a := &fakeAlloc{dir: dir, tasks: []string{"web"}}
	if err := os.MkdirAll(filepath.Join(dir, "alloc", "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, a.LogPath("web", "stdout"), "hi\n")
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	s, err := httpapi.New(httpapi.Config{Allocs: &fakeAllocs{allocs: map[string]*fakeAlloc{"a1": a}}, Clock: clk,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, advertised, err := httpapi.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if advertised != ln.Addr().String() {
		t.Fatalf("advertised %s for %s", advertised, ln.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	resp := get(t, "http://"+advertised+"/v1/client/fs/logs/a1?follow=true&plain=true")
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != "hi\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	clk.BlockUntilWaiters(1)
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Serve still runs after its context ended")
	}
	if rest, err := io.ReadAll(r); len(rest) != 0 {
		t.Fatalf("after Serve returned: %q, %v", rest, err)
	}
}

// A listener on an unspecified host advertises an address others can dial.
func TestListenAdvertises(t *testing.T) {
	ln, advertised, err := httpapi.Listen("0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	host, port, err := net.SplitHostPort(advertised)
	if err != nil || net.ParseIP(host) == nil || net.ParseIP(host).IsUnspecified() || port == "0" {
		t.Fatalf("advertised %q for %s", advertised, ln.Addr())
	}
	if _, _, err := httpapi.Listen("not an address"); err == nil {
		t.Fatal("listened on a bad address")
	}
}

// GET /v1/client/allocation/:id answers the allocation's state as the
// client reports it, and 404 for one the client does not have.
func TestAllocStatus(t *testing.T) {
	allocs := &fakeAllocs{dir: t.TempDir(), allocs: map[string]*fakeAlloc{"a1": {tasks: []string{"web"}}}}
	s, err := httpapi.New(httpapi.Config{Allocs: allocs})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/v1/client/allocation/a1")
	if err != nil {
		t.Fatal(err)
	}
	var u events.AllocClientUpdate
	err = json.NewDecoder(resp.Body).Decode(&u)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || u.ClientStatus != events.AllocClientRunning {
		t.Fatalf("a1: %s %+v %v", resp.Status, u, err)
	}
	resp, err = http.Get(hs.URL + "/v1/client/allocation/nope")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "not found on this client") {
		t.Fatalf("unknown alloc: %s %s", resp.Status, b)
	}
}
