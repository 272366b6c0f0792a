package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/export"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/namespaces"
	settle "github.com/ordoplane/ordo/test/replay"
)

// workloadAgent is a dev agent with the scheduler on that has run a small
// workload: three simulated nodes (through the client API), a service job
// scaled up, a batch job and a system job, settled.
type workloadAgent struct {
	a    *agent.Agent
	addr string
	// mid is an index in the middle of the workload: after the nodes and
	// the first jobs, before the scale-up.
	mid uint64
}

func startWorkload(t *testing.T) *workloadAgent {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir, cfg.HTTPAddr, cfg.RaftAddr = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout, cfg.NoSync = 100*time.Millisecond, true
	cfg.HeartbeatMinTTL, cfg.HeartbeatGrace = time.Hour, time.Hour // no node goes down
	cfg.Logger, cfg.RaftLogOutput = slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	w := &workloadAgent{a: a, addr: "http://" + a.HTTPAddr()}
	// waitSettled waits for the scheduler to settle and the deployment
	// watcher to have moved every new deployment to running: then nothing
	// appends until a client reports (there are none) or a deadline passes.
	waitSettled := func() uint64 { return settle.WaitQuiet(t, a.Store(), a.FSM().Notifier(), 30*time.Second) }
	deadline := time.After(15 * time.Second)
	for {
		_, wake := a.FSM().Notifier().Applied()
		snap := a.Store().Snapshot()
		_, err := namespaces.Get(projections.NewView(snap), namespaces.Default)
		snap.Close()
		if err == nil && a.Node().IsLeader() {
			break
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatal("agent never bootstrapped")
		}
	}
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("node-%d", i)
		put(t, w.addr+"/v1/client/register", fmt.Sprintf(`{"ID":%q,"Name":"host-%d","Datacenter":"dc1",`+
			`"Attributes":{"kernel.name":"linux"},"Resources":{"CPU":2000,"MemoryMB":2048,"DiskMB":10000},`+
			`"Drivers":{"exec":{"Detected":true,"Healthy":true}}}`, id, i))
		put(t, w.addr+"/v1/client/"+id+"/heartbeat", `{"Status":"ready"}`)
	}
	spec := func(typ, id string, count int) string {
		return writeFile(t, id+"-"+fmt.Sprint(count)+".hcl", fmt.Sprintf(`job %q {
  type = %q
  group "main" {
    count = %d
    task "t" {
      driver = "exec"
      config { command = "/bin/sleep" }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`, id, typ, count))
	}
	run := func(path string) {
		if code, stdout, stderr := runCLI("job", "run", "-detach", "-address", w.addr, path); code != 0 {
			t.Fatalf("job run %s: %d %s %s", path, code, stdout, stderr)
		}
	}
	run(spec("service", "web", 2))
	run(spec("batch", "report", 2))
	run(spec("system", "agent", 1))
	w.mid = waitSettled()
	run(spec("service", "web", 4))
	waitSettled()
	return w
}

func put(t *testing.T, url, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s: %s: %s", url, resp.Status, b)
	}
}

// ids returns the agent's allocation ids and completed eval ids.
func (w *workloadAgent) ids(t *testing.T) (allocIDs, evalIDs []string) {
	t.Helper()
	snap := w.a.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	if err := allocs.Scan(v, allocs.Query{}, func(a *allocs.Alloc) error { allocIDs = append(allocIDs, a.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := evals.Scan(v, evals.Query{}, func(e *evals.Eval) error {
		if e.Status == events.EvalStatusComplete && e.SnapshotIndex > 0 {
			evalIDs = append(evalIDs, e.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(allocIDs) == 0 || len(evalIDs) == 0 {
		t.Fatalf("the workload made %d allocations and %d decisions", len(allocIDs), len(evalIDs))
	}
	return allocIDs, evalIDs
}

// TestExportReplayRoundTrip: a real workload exported with `ordo log
// export` and replayed with `ordo replay FILE -- …` answers job, node,
// alloc and eval reads exactly as the live server does at the same index;
// a slice exported with its base state too; writes are refused; the file
// is checked before anything is answered.
func TestExportReplayRoundTrip(t *testing.T) {
	w := startWorkload(t)
	allocIDs, evalIDs := w.ids(t)
	reads := [][]string{
		{"job", "status"},
		{"job", "status", "web"},
		{"job", "status", "-json", "web"},
		{"job", "status", "agent"},
		{"node", "status"},
		{"node", "status", "-json"},
		{"node", "status", "node-2"},
		{"alloc", "status", allocIDs[0]},
		{"alloc", "status", "-json", allocIDs[len(allocIDs)-1]},
		{"eval", "list"},
		{"eval", "status", evalIDs[0]},
		{"namespace", "list"},
		// Time travel works in a replay too.
		{"job", "status", "-json", "-at-index", fmt.Sprint(w.mid), "web"},
		{"node", "status", "-at-index", fmt.Sprint(w.mid)},
		{"eval", "list", "-at-index", fmt.Sprint(w.mid)},
	}
	// -verbose: full ids and timestamps, since relative times ("2s ago")
	// move between the live reads and the replay's.
	for i := range reads {
		reads[i] = append([]string{"-verbose"}, reads[i]...)
	}
	applied := w.a.FSM().Applied()
	live := map[string]string{}
	for _, r := range reads {
		code, stdout, stderr := runCLI(append([]string{"-address", w.addr}, r...)...)
		if code != 0 {
			t.Fatalf("live %q: %d %s", r, code, stderr)
		}
		live[strings.Join(r, " ")] = stdout
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "incident.olog")
	code, stdout, stderr := runCLI("log", "export", "-address", w.addr, "-from", "1", file)
	if code != 0 || !strings.Contains(stdout, "Exported ") || !strings.Contains(stdout, "SHA-256") {
		t.Fatalf("export: %d %q %q", code, stdout, stderr)
	}
	if w.a.FSM().Applied() != applied {
		t.Fatalf("the cluster moved from %d to %d during the test", applied, w.a.FSM().Applied())
	}
	if _, err := os.Stat(file + ".partial"); !os.IsNotExist(err) {
		t.Errorf("the partial download is left: %v", err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := export.Verify(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if h := sum.Header; h.From != 1 || h.FirstIndex == 0 || h.LastIndex == 0 || h.LastIndex > applied || h.ClusterID != w.a.ID() || h.ClusterIDSource != export.ClusterFirstServer || h.Server != w.a.ID() {
		t.Errorf("header %+v (agent %s)", h, w.a.ID())
	}

	for _, r := range reads {
		code, stdout, stderr := runCLI(append([]string{"replay", file, "--"}, r...)...)
		if code != 0 {
			t.Errorf("replay %q: %d %s", r, code, stderr)
			continue
		}
		if want := live[strings.Join(r, " ")]; stdout != want {
			t.Errorf("replay %q answers\n%s\nthe live server answered\n%s", r, stdout, want)
		}
		if !strings.Contains(stderr, "read-only") {
			t.Errorf("replay %q: stderr %q does not say it is a read-only replay", r, stderr)
		}
	}

	// The replay re-runs decisions too, and refuses writes.
	if code, stdout, stderr := runCLI("replay", file, "--", "debug", "reschedule", "-eval", evalIDs[0]); code != 0 || !strings.Contains(stdout, "reproduces") {
		t.Errorf("replay debug reschedule: %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI("replay", file, "--", "namespace", "apply", "-description", "x", "drill"); code != 1 || !strings.Contains(stderr, "read-only") {
		t.Errorf("a write in a replay: %d %q", code, stderr)
	}
	if code, stdout, _ := runCLI("replay", file); code != 0 || !strings.Contains(stdout, "Cluster ID") || !strings.Contains(stdout, sum.Checksum) {
		t.Errorf("replay without a command: %d %q", code, stdout)
	}
	for _, bad := range [][]string{{"replay", file, "--", "agent", "-dev"}, {"replay", file, "--", "-address", w.addr, "node", "status"}, {"replay"}} {
		if code, _, _ := runCLI(bad...); code != 1 {
			t.Errorf("%q: exit %d, want 1", bad, code)
		}
	}

	// A slice from the middle with its base state reads as the whole; with
	// -state=false it says it holds no earlier state.
	from := fmt.Sprint(w.mid + 1)
	slice := filepath.Join(dir, "slice.olog")
	if code, stdout, stderr := runCLI("log", "export", "-address", w.addr, "-from", from, slice); code != 0 || !strings.Contains(stdout, "With the state at index "+fmt.Sprint(w.mid)) {
		t.Fatalf("export a slice: %d %q %q", code, stdout, stderr)
	}
	for _, r := range reads {
		code, stdout, stderr := runCLI(append([]string{"replay", slice, "--"}, r...)...)
		// The slice holds no entry at its base index, so the banner of a
		// read there cannot say that entry's time.
		asOf := regexp.MustCompile(`(?m)^(As of index \d+) \(.*\)$`)
		if want := asOf.ReplaceAllString(live[strings.Join(r, " ")], "$1"); code != 0 || asOf.ReplaceAllString(stdout, "$1") != want {
			t.Errorf("replay of the slice %q: %d %s\n%s\nwant\n%s", r, code, stderr, stdout, want)
		}
	}
	// The slice's first state is its base, at mid: nothing before it.
	if code, _, stderr := runCLI("replay", slice, "--", "job", "status", "-at-index", fmt.Sprint(w.mid-1)); code != 1 ||
		!strings.Contains(stderr, fmt.Sprintf("before the replayed file's first state, at index %d", w.mid)) {
		t.Errorf("a read before the slice's base state: %d %q", code, stderr)
	}
	bare := filepath.Join(dir, "bare.olog")
	if code, stdout, stderr := runCLI("log", "export", "-address", w.addr, "-from", from, "-state=false", bare); code != 0 || strings.Contains(stdout, "With the state") {
		t.Fatalf("export a bare slice: %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr := runCLI("replay", bare, "--", "job", "status"); code != 0 || !strings.Contains(stderr, "no state before") {
		t.Errorf("replay of a bare slice: %d %q", code, stderr)
	}

	// Damage is found before anything is answered.
	b, _ := os.ReadFile(file)
	b[len(b)/2] ^= 0x20
	broken := filepath.Join(dir, "broken.olog")
	os.WriteFile(broken, b, 0o644)
	if code, stdout, stderr := runCLI("replay", broken, "--", "job", "status"); code != 1 || stdout != "" || !strings.Contains(stderr, "ordo: history file") {
		t.Errorf("replay of a damaged file: %d %q %q", code, stdout, stderr)
	}
	// Export errors come back as the server's message.
	if code, _, stderr := runCLI("log", "export", "-address", w.addr, "-from", "100000", filepath.Join(dir, "none.olog")); code != 1 || !strings.Contains(stderr, "past the archive's last index") {
		t.Errorf("export past the end: %d %q", code, stderr)
	}
}
