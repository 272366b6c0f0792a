package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/projections/projectionstest"
)

// processorGoroutines returns the stacks of the running goroutines that
// execute, or were started by, code in ordo's processors (the supervisor,
// the eval feed, workers, the plan applier, the heartbeat monitor, the
// drainer, periodic, deploywatch — and the Kafka mirror, which lives in
// processors/mirror), keyed by goroutine id.
func processorGoroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	head := regexp.MustCompile(`^goroutine (\d+) `)
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		m := head.FindStringSubmatch(g)
		if m != nil && strings.Contains(g, "github.com/ordoplane/ordo/processors/") {
			out[m[1]] = g
		}
	}
	return out
}

// idleHistoryFile runs a dev server with no scheduler and no periodic
// launcher, registers three ready nodes and a batch job (whose eval stays
// pending: nothing schedules it), exports the log from 1 and stops the
// server. It returns the file and the job's eval id.
func idleHistoryFile(t *testing.T) (file, evalID string) {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir, cfg.HTTPAddr, cfg.RaftAddr = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout, cfg.NoSync = 100*time.Millisecond, true
	cfg.Scheduler.Disabled, cfg.DisablePeriodic = true, true
	// No node misses a heartbeat while the server runs: the file shows
	// them ready, with their last heartbeat long past when it is replayed.
	cfg.HeartbeatMinTTL, cfg.HeartbeatGrace = time.Hour, time.Hour
	cfg.Logger, cfg.RaftLogOutput = slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown()
	addr := "http://" + a.HTTPAddr()
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
		put(t, addr+"/v1/client/register", fmt.Sprintf(`{"ID":%q,"Name":"host-%d","Datacenter":"dc1",`+
			`"Attributes":{"kernel.name":"linux"},"Resources":{"CPU":2000,"MemoryMB":2048,"DiskMB":10000},`+
			`"Drivers":{"exec":{"Detected":true,"Healthy":true}}}`, id, i))
		put(t, addr+"/v1/client/"+id+"/heartbeat", `{"Status":"ready"}`)
	}
	spec := writeFile(t, "report.hcl", `job "report" {
  type = "batch"
  group "main" {
    count = 2
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`)
	if code, stdout, stderr := runCLI("job", "run", "-detach", "-address", addr, spec); code != 0 {
		t.Fatalf("job run: %d %s %s", code, stdout, stderr)
	}
	snap := a.Store().Snapshot()
	err = evals.Scan(projections.NewView(snap), evals.Query{}, func(e *evals.Eval) error {
		if e.JobID == "report" && e.Status == events.EvalStatusPending {
			evalID = e.ID
		}
		return nil
	})
	snap.Close()
	if err != nil || evalID == "" {
		t.Fatalf("no pending eval for the job (scheduler disabled): %v", err)
	}
	// The check below can fail: it sees a running server's processors.
	if len(processorGoroutines()) == 0 {
		t.Fatal("no processor goroutine found in a running server: the check is blind")
	}
	file = filepath.Join(t.TempDir(), "idle.olog")
	if code, stdout, stderr := runCLI("log", "export", "-address", addr, "-from", "1", file); code != 0 {
		t.Fatalf("export: %d %s %s", code, stdout, stderr)
	}
	return file, evalID
}

// TestReplayRunsNoProcessor is issue 5's safety guarantee for `ordo
// replay`: a replay runs projections only. The file holds a pending eval
// and three ready nodes, all a scheduler or a heartbeat monitor would act
// on. While the replay serves reads (live, at_index, histories, a re-run)
// and refuses writes:
//   - no goroutine of any processor (supervisor, eval feed, workers, plan
//     applier, heartbeat, drainer, periodic, deploywatch, and the Kafka
//     mirror once processors/mirror lands: it is covered by the same
//     package path) exists, so nothing can act or mirror;
//   - the eval stays pending with no allocation, the nodes stay ready;
//   - the replay store's applied index, archive and projections do not
//     change: nothing is appended or applied.
func TestReplayRunsNoProcessor(t *testing.T) {
	file, evalID := idleHistoryFile(t) // the server is stopped when it returns
	before := processorGoroutines()

	r, err := openReplay(file, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	addr, stop, err := r.serve("")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	base := "http://" + addr
	projs := all.Projections()
	applied := r.fsm.Applied()
	snap := r.store.Snapshot()
	archived, sums := projectionstest.ArchiveLen(t, snap), projectionstest.Checksums(t, snap, projs)
	snap.Close()
	if applied != r.stats.Header.LastIndex {
		t.Fatalf("the replay applied %d, the file ends at %d", applied, r.stats.Header.LastIndex)
	}

	for _, read := range [][]string{
		{"job", "status", "report"},
		{"eval", "status", evalID},
		{"node", "status"},
		{"history", "job", "report"},
		{"job", "status", "-at-index", fmt.Sprint(applied), "report"},
		{"node", "status", "-at-index", fmt.Sprint(applied / 2)},
		{"log", "show", "-from", "1"},
	} {
		if code, stdout, stderr := runCLI(append([]string{"-address", base}, read...)...); code != 0 {
			t.Errorf("%q: %d %s %s", read, code, stdout, stderr)
		}
	}
	// Writes are refused with 409 saying why; the CLI's too.
	for _, w := range []struct{ method, path, body string }{
		{"PUT", "/v1/namespace/drill", `{"Name":"drill"}`},
		{"PUT", "/v1/client/node-1/heartbeat", `{"Status":"ready"}`},
		{"PUT", "/v1/node/node-1/drain", `{"DrainSpec":{"Deadline":3600000000000}}`},
		{"PUT", "/v1/operator/projections/rebuild", `{}`},
	} {
		req, _ := http.NewRequest(w.method, base+w.path, strings.NewReader(w.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), "read-only") {
			t.Errorf("%s %s: %d %s; want 409 saying the replay is read-only", w.method, w.path, resp.StatusCode, b)
		}
	}
	if code, _, stderr := runCLI("-address", base, "job", "stop", "report"); code == 0 || !strings.Contains(stderr, "read-only") {
		t.Errorf("job stop in a replay: %d %q", code, stderr)
	}

	// No processor runs: not one goroutine in ordo/processors/ beyond those
	// (if any) the stopped server left.
	for id, g := range processorGoroutines() {
		if _, ok := before[id]; !ok {
			t.Errorf("a processor goroutine runs beside the replay:\n%s", g)
		}
	}
	// Nothing acted: the eval is pending with no allocation, the nodes ready.
	var ev struct{ Status string }
	getJSON(t, base+"/v1/evaluation/"+evalID, &ev)
	var allocsOf []json.RawMessage
	getJSON(t, base+"/v1/job/report/allocations", &allocsOf)
	if ev.Status != events.EvalStatusPending || len(allocsOf) != 0 {
		t.Errorf("eval %s is %q with %d allocations; a replay must leave it pending and unplaced", evalID, ev.Status, len(allocsOf))
	}
	snap = r.store.Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	for i := 1; i <= 3; i++ {
		n, err := nodes.Get(v, fmt.Sprintf("node-%d", i))
		if err != nil || n.Status != events.NodeStatusReady {
			t.Errorf("node-%d: %v %+v; a replay must leave it as the file has it (ready)", i, err, n)
		}
	}
	// Nothing appended, nothing applied.
	if got := r.fsm.Applied(); got != applied {
		t.Errorf("the replay's applied index moved from %d to %d", applied, got)
	}
	if got := projectionstest.ArchiveLen(t, snap); got != archived {
		t.Errorf("the replay's archive grew from %d to %d events", archived, got)
	}
	for name, sum := range projectionstest.Checksums(t, snap, projs) {
		if sum != sums[name] {
			t.Errorf("projection %s changed during the replay", name)
		}
	}
}

// getJSON decodes a 200 answer to GET url into out.
func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
