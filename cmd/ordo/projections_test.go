package main

import (
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/storage/waittest"
)

// TestProjectionsCommands runs list, rebuild (with its progress bar) and
// verify against a dev server, then offline against its stopped data
// directory.
func TestProjectionsCommands(t *testing.T) {
	dir := t.TempDir()
	cfg := agent.DevConfig()
	cfg.DataDir, cfg.HTTPAddr, cfg.RaftAddr = dir, "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout, cfg.NoSync = 100*time.Millisecond, true
	cfg.Logger, cfg.RaftLogOutput = slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			a.Shutdown()
		}
	}()
	addr := "http://" + a.HTTPAddr()
	for i := range 20 {
		var stderr string
		if !waittest.Poll(15*time.Second, func() bool {
			var code int
			code, _, stderr = runCLI("namespace", "apply", "-address", addr, "team-"+string(rune('a'+i)))
			return code == 0
		}) {
			t.Fatalf("namespace apply: %s", stderr)
		}
	}

	code, stdout, stderr := runCLI("operator", "projections", "list", "-address", addr)
	if code != 0 || !strings.Contains(stdout, "namespaces") || !strings.Contains(stdout, "ready") || !strings.Contains(stdout, "Checksum") {
		t.Fatalf("list: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("operator", "projections", "rebuild", "-address", addr, "namespaces", "servers")
	if code != 0 || !strings.Contains(stdout, "rebuilt namespaces, servers") {
		t.Fatalf("rebuild: %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "events") {
		t.Errorf("rebuild drew no progress bar: %q", stderr)
	}
	// The server's default: one fewer than its cores, at least 1, at most
	// the two projections rebuilt.
	want := plural(min(2, max(1, runtime.GOMAXPROCS(0)-1)), "projection") + " at once"
	if !strings.Contains(stdout, want) || !strings.Contains(stdout, "the switch held writes") {
		t.Errorf("rebuild with the server's default parallelism: %s, want %q", stdout, want)
	}
	code, stdout, stderr = runCLI("operator", "projections", "rebuild", "-address", addr, "-quiet", "-parallel", "-1", "namespaces", "servers")
	if code != 0 || !strings.Contains(stdout, "2 projections at once") {
		t.Errorf("rebuild -parallel -1: %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI("operator", "projections", "cancel", "-address", addr)
	if code == 0 || !strings.Contains(stderr, "running projection job") {
		t.Errorf("cancel with no job running: %d %s", code, stderr)
	}
	code, _, stderr = runCLI("operator", "projections", "rebuild", "-address", addr, "-parallel", "-3")
	if code == 0 || !strings.Contains(stderr, "Parallelism") {
		t.Errorf("rebuild -parallel -3: %d %s", code, stderr)
	}
	code, stdout, stderr = runCLI("operator", "projections", "list", "-address", addr, "-checksum=false")
	if code != 0 || !strings.Contains(stdout, "Job 2: rebuild of namespaces, servers, done") {
		t.Errorf("list after a rebuild names no job: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("operator", "history", "-address", addr)
	if code != 0 || !strings.Contains(stdout, "Applied index") || !strings.Contains(stdout, "Projection versions") ||
		!strings.Contains(stdout, "namespaces=") || !strings.Contains(stdout, "Oldest index") {
		t.Errorf("operator history: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("operator", "projections", "verify", "-address", addr, "-quiet")
	if code != 0 || !strings.Contains(stdout, "equal their rebuild") || strings.Contains(stdout, "DIFFERS") {
		t.Fatalf("verify: %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI("operator", "projections", "rebuild", "-address", addr, "nope")
	if code == 0 || !strings.Contains(stderr, `no projection named "nope"`) {
		t.Errorf("rebuild of an unknown projection: %d %s", code, stderr)
	}
	code, _, stderr = runCLI("operator", "projections", "rebuild", "-offline", "-data-dir", dir)
	if code == 0 || !strings.Contains(stderr, "still running") {
		t.Errorf("offline rebuild of a running server's data: %d %s", code, stderr)
	}

	stopped = true
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI("operator", "projections", "rebuild", "-offline", "-data-dir", dir, "-quiet")
	if code != 0 || !strings.Contains(stdout, "rebuilt ") {
		t.Fatalf("offline rebuild: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("operator", "projections", "verify", "-offline", "-data-dir", dir, "-quiet")
	if code != 0 || !strings.Contains(stdout, "equal their rebuild") {
		t.Fatalf("offline verify: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("operator", "projections", "list", "-offline", "-data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "namespaces") {
		t.Fatalf("offline list: %d\n%s%s", code, stdout, stderr)
	}
}
