package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// startDevAgent starts a dev agent on 127.0.0.1 and returns its API address
// once it leads and has bootstrapped.
func startDevAgent(t *testing.T, opts ...func(*agent.Config)) string {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir, cfg.HTTPAddr, cfg.RaftAddr = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout, cfg.NoSync = 100*time.Millisecond, true
	cfg.Logger, cfg.RaftLogOutput = slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard
	for _, o := range opts {
		o(&cfg)
	}
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, wake := a.FSM().Notifier().Applied()
		snap := a.Store().Snapshot()
		_, err := namespaces.Get(projections.NewView(snap), namespaces.Default)
		snap.Close()
		if err == nil && a.Node().IsLeader() {
			return "http://" + a.HTTPAddr()
		}
		select {
		case <-wake:
		case <-time.After(time.Until(deadline)):
			t.Fatal("agent never bootstrapped")
		}
	}
}

func registerNode(t *testing.T, addr, id, name string) {
	t.Helper()
	body := `{"ID":"` + id + `","Name":"` + name + `","Datacenter":"dc1","NodeClass":"gpu",
		"Attributes":{"kernel.name":"linux"},"Resources":{"CPU":2000,"MemoryMB":1024,"DiskMB":100},
		"Drivers":{"exec":{"Detected":true,"Healthy":true}},"NodeNetworks":[{"Name":"default","Address":"10.0.0.9"}],
		"ReservedHostPorts":"22,8000-8100","HostVolumes":{"certs":{"Name":"certs","Path":"/etc/ssl","ReadOnly":true}}}`
	req, _ := http.NewRequest("PUT", addr+"/v1/client/register", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("register %s: %d", id, resp.StatusCode)
	}
}

func TestNodeCommands(t *testing.T) {
	// Without the scheduling processors: the drainer would complete the
	// drain of these empty nodes at once (as Nomad's does), racing the
	// assertions on a draining node.
	addr := startDevAgent(t, func(cfg *agent.Config) { cfg.Scheduler.Disabled = true })
	if code, stdout, _ := runCLI("node", "status", "-address", addr); code != 0 || stdout != "No nodes registered\n" {
		t.Fatalf("empty status: %d %q", code, stdout)
	}
	registerNode(t, addr, "a1b2c3d4-0001", "client-1")
	registerNode(t, addr, "a1b2c3d4-0002", "client-2")

	// -verbose: these ids share their first eight characters.
	code, stdout, stderr := runCLI("node", "status", "-verbose", "-address", addr)
	want := "ID             Node Pool  DC   Name      Class  Drain  Eligibility  Status\n" +
		"a1b2c3d4-0001  default    dc1  client-1  gpu    false  eligible     initializing\n" +
		"a1b2c3d4-0002  default    dc1  client-2  gpu    false  eligible     initializing\n"
	if code != 0 || stdout != want {
		t.Fatalf("status: %d %q\n%s\nwant\n%s", code, stderr, stdout, want)
	}
	code, stdout, stderr = runCLI("node", "status", "-verbose", "-address", addr, "a1b2c3d4-0001")
	for _, line := range []string{"ID                 = a1b2c3d4-0001", "Drivers            = exec",
		"CPU                = 2000 MHz (0 reserved)", "Status             = initializing",
		"Addresses          = default=10.0.0.9", "Dynamic Ports      = 20000-32000", "Reserved Ports     = 22,8000-8100",
		"Host Volumes       = certs:/etc/ssl (read-only)", "\nAttributes\nkernel.name = linux\n", "\nAllocations\nNo allocations placed\n"} {
		if !strings.Contains(stdout, line) {
			t.Errorf("node status lacks %q:\n%s (%d %s)", line, stdout, code, stderr)
		}
	}
	code, stdout, _ = runCLI("node", "status", "-json", "-address", addr, "a1b2c3d4-0002")
	var js map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &js) != nil || js["Name"] != "client-2" {
		t.Fatalf("status -json: %d %s", code, stdout)
	}
	if code, _, stderr := runCLI("node", "status", "-address", addr, "a1b2"); code != 1 || !strings.Contains(stderr, "matches several nodes") {
		t.Fatalf("ambiguous prefix: %d %s", code, stderr)
	}

	// Eligibility and drain take a unique prefix.
	if code, stdout, stderr := runCLI("node", "eligibility", "-disable", "-address", addr, "a1b2c3d4-0001"); code != 0 ||
		stdout != "Node \"a1b2c3d4-0001\" scheduling eligibility set: ineligible for scheduling\n" {
		t.Fatalf("eligibility: %d %q %q", code, stdout, stderr)
	}
	if code, stdout, stderr := runCLI("node", "drain", "-enable", "-deadline", "30m", "-address", addr, "a1b2c3d4-0002"); code != 0 ||
		stdout != "Node \"a1b2c3d4-0002\" drain strategy enabled\n" {
		t.Fatalf("drain: %d %q %q", code, stdout, stderr)
	}
	_, stdout, _ = runCLI("node", "status", "-address", addr, "a1b2c3d4-0002")
	if !strings.Contains(stdout, "Drain              = true; deadline ") || !strings.Contains(stdout, "Eligibility        = ineligible") {
		t.Fatalf("draining node:\n%s", stdout)
	}
	if code, _, stderr := runCLI("node", "eligibility", "-enable", "-address", addr, "a1b2c3d4-0002"); code != 1 || !strings.Contains(stderr, "draining") {
		t.Fatalf("eligible while draining: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI("node", "drain", "-disable", "-address", addr, "a1b2c3d4-0002"); code != 0 {
		t.Fatalf("drain -disable: %d %s", code, stderr)
	}
	_, stdout, _ = runCLI("node", "status", "-verbose", "-address", addr)
	if !strings.Contains(stdout, "a1b2c3d4-0002  default    dc1  client-2  gpu    false  eligible") {
		t.Fatalf("after drain -disable:\n%s", stdout)
	}
}

func TestNodeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"node", "eligibility", "n1"}, "exactly one of -enable and -disable"},
		{[]string{"node", "eligibility", "-enable", "-disable", "n1"}, "exactly one of -enable and -disable"},
		{[]string{"node", "eligibility", "-enable"}, "one argument"},
		{[]string{"node", "drain", "n1"}, "exactly one of -enable and -disable"},
		{[]string{"node", "drain", "-enable", "-deadline", "0s", "n1"}, "invalid -deadline"},
		{[]string{"node", "drain", "-enable", "-force", "-no-deadline", "n1"}, "exclude each other"},
		{[]string{"node", "drain", "-disable", "-force", "n1"}, "only with -enable"},
		{[]string{"node", "status", "a", "b"}, "accepts at most 1 arg"},
	} {
		code, _, stderr := runCLI(append(tc.args, "-address", "http://127.0.0.1:1")...)
		if code != 1 || !strings.Contains(stderr, tc.says) {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.says)
		}
	}
}
