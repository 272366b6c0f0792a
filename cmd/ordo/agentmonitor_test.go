package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/test/testagent"
)

// TestAgentMonitorPrintsFrames: ordo agent monitor asks for the agent's
// log with its flags and prints each frame's line, skipping heartbeats.
func TestAgentMonitorPrintsFrames(t *testing.T) {
	// "level=INFO msg=hello\n" and "level=DEBUG msg=there\n", base64.
	api := &fakeAPI{status: 200, answer: `{"Data":"bGV2ZWw9SU5GTyBtc2c9aGVsbG8K"}` + "\n{}\n" +
		`{"Data":"bGV2ZWw9REVCVUcgbXNnPXRoZXJlCg=="}` + "\n"}
	addr := api.start(t)
	code, stdout, stderr := runCLI("agent", "monitor", "-address", addr, "-log-level", "debug", "-json",
		"-node-id", "abcd", "-server-id", "leader")
	if want := "/v1/agent/monitor?log_json=true&log_level=debug&node_id=abcd&server_id=leader"; api.uri != want {
		t.Errorf("request URI %q, want %q", api.uri, want)
	}
	if want := "level=INFO msg=hello\nlevel=DEBUG msg=there\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	if code != 1 || !strings.Contains(stderr, "closed by the agent") {
		t.Errorf("exit %d, stderr %q: want the stream's end reported", code, stderr)
	}
}

// TestAgentMonitorFollowsADevAgent runs ordo agent monitor against a dev
// agent: a line the agent logs (below its own level) arrives, and
// cancelling the command (as Ctrl-C does) ends it without an error.
func TestAgentMonitorFollowsADevAgent(t *testing.T) {
	a, _ := testagent.StartDev(t, testagent.DevConfig(t.TempDir()))
	pr, pw := io.Pipe()
	var errOut strings.Builder
	root := newRootCommand(pw, &errOut)
	root.SetArgs(normalizeArgs([]string{"agent", "monitor", "-address", "http://" + a.HTTPAddr(), "-log-level", "debug"}))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		pw.Close()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// Once the command reads the log, a variable write logs a debug line.
	testagent.WaitFor(t, testagent.ServerTimeout, "the monitor subscribed", func() bool {
		m := testagent.Call(t, a.HTTPAddr(), "GET", "/v1/metrics?format=prometheus", "")
		return strings.Contains(m.Body, "ordo_agent_monitor_subscribers 1")
	})
	testagent.WaitFor(t, testagent.ServerTimeout, "a variable written", func() bool {
		return testagent.Call(t, a.HTTPAddr(), "PUT", "/v1/var/monitor/cli", `{"Items":{"k":"v"}}`).Status == 200
	})
	deadline := time.NewTimer(testagent.ServerTimeout)
	defer deadline.Stop()
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended; stderr %q", errOut.String())
			}
			if strings.Contains(l, `msg="variable written"`) && strings.Contains(l, "level=DEBUG") {
				break wait
			}
		case <-deadline.C:
			t.Fatal("no variable written line")
		}
	}
	cancel()
	go func() {
		for range lines { // drain until the command ends
		}
	}()
	if err := <-done; err != nil {
		t.Errorf("interrupted monitor: %v, want nil", err)
	}
}
