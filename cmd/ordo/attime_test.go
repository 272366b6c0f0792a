package main

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAtFlagsReachEveryRequest(t *testing.T) {
	api := &fakeAPI{status: 200, answer: `[]`}
	addr := api.start(t)
	for _, tc := range []struct {
		args []string
		want url.Values
	}{
		{[]string{"namespace", "list", "-at-index", "48213"}, url.Values{"at_index": {"48213"}}},
		{[]string{"-at-time", "2026-11-30T14:02:00Z", "node", "status"}, url.Values{"at_time": {"2026-11-30T14:02:00Z"}}},
		{[]string{"node", "status", "-at-time=2026-11-30T15:02:00+01:00"}, url.Values{"at_time": {"2026-11-30T14:02:00Z"}}},
	} {
		code, _, stderr := runCLI(append(tc.args, "-address", addr)...)
		u, err := url.ParseRequestURI(api.uri)
		if code != 0 || err != nil {
			t.Fatalf("%v: %d %s (%s)", tc.args, code, stderr, api.uri)
		}
		for k, v := range tc.want {
			if got := u.Query()[k]; len(got) != 1 || got[0] != v[0] {
				t.Errorf("%v: request %s has %s=%v, want %v", tc.args, api.uri, k, got, v)
			}
		}
	}
	// A duration means that long ago.
	if code, _, stderr := runCLI("node", "status", "-at-time", "2h", "-address", addr); code != 0 {
		t.Fatalf("-at-time 2h: %d %s", code, stderr)
	}
	u, _ := url.ParseRequestURI(api.uri)
	at, err := time.Parse(time.RFC3339Nano, u.Query().Get("at_time"))
	if ago := time.Since(at); err != nil || ago < 2*time.Hour || ago > 2*time.Hour+time.Minute {
		t.Fatalf("-at-time 2h sent %q", u.Query().Get("at_time"))
	}
	// Without the flags, nothing is added.
	runCLI("namespace", "list", "-address", addr)
	if strings.Contains(api.uri, "at_") {
		t.Fatalf("request without the flags: %s", api.uri)
	}
	for _, args := range [][]string{
		{"node", "status", "-at-index", "3", "-at-time", "2026-11-30T14:02:00Z"},
		{"node", "status", "-at-time", "yesterday"},
		{"node", "status", "-at-index", "x"},
	} {
		api.uri = ""
		if code, _, stderr := runCLI(append(args, "-address", addr)...); code != 1 || api.uri != "" || !strings.Contains(stderr, "at-") {
			t.Errorf("%v: %d %q, sent %q", args, code, stderr, api.uri)
		}
	}
}

// TestAtIndexCommands reads a job and the nodes as they stood before
// later changes, through a real agent.
func TestAtIndexCommands(t *testing.T) {
	a, addr := startJobAgent(t)
	registerNode(t, addr, "a1b2c3d4-0001", "client-1")
	oneNode := strconv.FormatUint(a.FSM().Applied(), 10)
	registerNode(t, addr, "a1b2c3d4-0002", "client-2")

	if code, stdout, stderr := runCLI("job", "run", "-detach", "-address", addr, writeFile(t, "web.hcl", jobHCL)); code != 0 {
		t.Fatalf("run: %d %s %s", code, stdout, stderr)
	}
	running := strconv.FormatUint(a.FSM().Applied(), 10)
	if code, _, stderr := runCLI("job", "stop", "-address", addr, "web"); code != 0 {
		t.Fatalf("stop: %d %s", code, stderr)
	}
	if _, stdout, _ := runCLI("job", "status", "-address", addr, "web"); !strings.Contains(stdout, "Status        = dead") {
		t.Fatalf("live status:\n%s", stdout)
	}
	code, stdout, stderr := runCLI("job", "status", "-at-index", running, "-address", addr, "web")
	if code != 0 || !strings.Contains(stdout, "Status        = pending") {
		t.Fatalf("job status -at-index %s: %d %s\n%s", running, code, stderr, stdout)
	}
	code, stdout, stderr = runCLI("job", "status", "-at-index", oneNode, "-address", addr, "web")
	if code != 1 || !strings.Contains(stderr, "no job") {
		t.Fatalf("job status before the job: %d %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("node", "status", "-at-index", oneNode, "-address", addr)
	if code != 0 || !strings.Contains(stdout, "client-1") || strings.Contains(stdout, "client-2") {
		t.Fatalf("node status -at-index %s: %d %s\n%s", oneNode, code, stderr, stdout)
	}
	if _, stdout, _ := runCLI("node", "status", "-at-time", time.Now().UTC().Format(time.RFC3339Nano), "-address", addr); !strings.Contains(stdout, "client-2") {
		t.Fatalf("node status -at-time now:\n%s", stdout)
	}
	// Writes are refused on a historical view, and nothing is appended.
	before := a.FSM().Applied()
	code, _, stderr = runCLI("job", "run", "-detach", "-at-index", running, "-address", addr, writeFile(t, "web.hcl", jobHCL))
	if code != 1 || !strings.Contains(stderr, "writes are refused on a historical view") || a.FSM().Applied() != before {
		t.Fatalf("job run -at-index: %d %s (applied %d → %d)", code, stderr, before, a.FSM().Applied())
	}
}
