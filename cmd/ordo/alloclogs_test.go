package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
	"github.com/ordoplane/ordo/test/testlog"
)

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		data  string
		n     int64
		want  string
		count int64
	}{
		{"a\nb\nc\n", 2, "b\nc\n", 2},
		{"a\nb\nc", 2, "b\nc", 2},
		{"a\nb\nc\n", 5, "a\nb\nc\n", 2},
		{"a\nb\nc\n", 0, "", 2},
		{"", 3, "", 0},
		{"partial\nx\n", 1, "x\n", 1},
	} {
		if got := string(lastLines([]byte(tc.data), tc.n)); got != tc.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tc.data, tc.n, got, tc.want)
		}
		if got := countLines([]byte(tc.data)); got != tc.count {
			t.Errorf("countLines(%q) = %d, want %d", tc.data, got, tc.count)
		}
	}
}

// End to end, as `ordo agent -dev` runs: a server and a client with the
// exec driver in one process. docs/examples/hello.hcl runs through the
// CLI, and its greeting comes back through `ordo alloc logs` (the server
// proxying to the client's endpoint), followed until the allocation
// stops, and through the nomad/api client's AllocFS().Logs (which asks
// the node directly).
func TestAllocLogsHello(t *testing.T) {
	const timeout = 20 * time.Second
	cfg := agent.DevConfig()
	cfg.Client = agent.DevClientConfig()
	cfg.Client.NodeName = "dev-node"
	cfg.DataDir, cfg.HTTPAddr, cfg.RaftAddr = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout, cfg.NoSync = 100*time.Millisecond, true
	cfg.Logger, cfg.RaftLogOutput = slog.New(slog.DiscardHandler), io.Discard
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	addr := "http://" + a.HTTPAddr()
	nc, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, timeout, "the dev node ready", func() bool {
		nodes, _, err := nc.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})

	if code, stdout, stderr := runCLI("job", "run", "-address", addr, "../../docs/examples/hello.hcl"); code != 0 {
		t.Fatalf("job run: %d %s %s", code, stdout, stderr)
	}
	var alloc *api.AllocationListStub
	testagent.WaitFor(t, timeout, "hello's allocation running", func() bool {
		list, _, err := nc.Jobs().Allocations("hello", false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "running" {
			return false
		}
		alloc = list[0]
		return true
	})
	prefix := alloc.ID[:8]
	// alloc status shows the task and its recent events.
	if code, out, stderr := runCLI("alloc", "status", "-address", addr, prefix); code != 0 ||
		!strings.Contains(out, "Recent Events (hello):") || !strings.Contains(out, "Started") ||
		!strings.Contains(out, "Received") {
		t.Errorf("alloc status: %d %s %s", code, out, stderr)
	}
	var stdout string
	testagent.WaitFor(t, timeout, "the greeting in the logs", func() bool {
		var code int
		code, stdout, _ = runCLI("alloc", "logs", "-address", addr, prefix)
		return code == 0 && strings.HasPrefix(stdout, "hello from ordo\n")
	})
	for _, tc := range []struct {
		args []string
		ok   func(string) bool
	}{
		{[]string{"hello"}, func(s string) bool { return strings.HasPrefix(s, "hello from ordo\n") }},
		{[]string{"-stderr"}, func(s string) bool { return s == "" }},
		{[]string{"-tail", "-n", "1"}, func(s string) bool { return strings.Count(s, "\n") == 1 && strings.HasSuffix(s, "\n") }},
		{[]string{"-c", "5"}, func(s string) bool { return len(s) == 5 && strings.HasSuffix(s, "\n") }},
		{[]string{"-tail"}, func(s string) bool { return strings.HasPrefix(s, "hello from ordo\n") }}, // fewer than 10 lines yet
	} {
		args := append([]string{"alloc", "logs", "-address", addr}, tc.args...)
		if len(tc.args) == 1 && tc.args[0] == "hello" {
			args = append(args[:4], prefix, "hello")
		} else {
			args = append(args, prefix)
		}
		code, out, stderr := runCLI(args...)
		if code != 0 || !tc.ok(out) {
			t.Errorf("alloc logs %v: %d %q %q", tc.args, code, out, stderr)
		}
	}
	if code, _, stderr := runCLI("alloc", "logs", "-address", addr, prefix, "nope"); code != 1 || !strings.Contains(stderr, `task "nope" not found`) {
		t.Errorf("unknown task: %d %q", code, stderr)
	}

	// Frames through the server's proxy, decoded as nomad/api's.
	resp, err := http.Get(addr + "/v1/client/fs/logs/" + prefix + "?task=hello&type=stdout")
	if err != nil {
		t.Fatal(err)
	}
	var frame api.StreamFrame
	err = json.NewDecoder(resp.Body).Decode(&frame)
	resp.Body.Close()
	if err != nil || !strings.HasPrefix(string(frame.Data), "hello from ordo\n") || frame.File != "alloc/logs/hello.stdout" {
		t.Fatalf("first frame through the server: %+v %v", frame, err)
	}

	// The nomad/api client.
	full, _, err := nc.Allocations().Info(alloc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel := make(chan struct{})
	defer close(cancel)
	frames, errs := nc.AllocFS().Logs(full, false, "hello", "stdout", "start", 0, cancel, nil)
	var got strings.Builder
	for f := range frames {
		got.Write(f.Data)
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if !strings.HasPrefix(got.String(), "hello from ordo\n") {
		t.Fatalf("nomad/api AllocFS().Logs: %q", got.String())
	}

	// -f streams until the allocation stops and everything was sent.
	var out, errOut testlog.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"alloc", "logs", "-f", "-address", addr, prefix}, &out, &errOut) }()
	testagent.WaitFor(t, timeout, "alloc logs -f printing", func() bool { return strings.HasPrefix(out.String(), "hello from ordo\n") })
	select {
	case code := <-done:
		t.Fatalf("alloc logs -f returned %d before the allocation stopped: %q", code, errOut.String())
	default:
	}
	if code, _, stderr := runCLI("alloc", "stop", "-no-shutdown-delay", "-address", addr, alloc.ID); code != 0 {
		t.Fatalf("alloc stop: %s", stderr)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("alloc logs -f: %d %q", code, errOut.String())
		}
	case <-time.After(timeout):
		t.Fatal("alloc logs -f still runs after the allocation stopped")
	}
}
