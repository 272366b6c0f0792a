// This file tests projection rebuilds on a real agent: the rebuild a
// version change triggers on start, and an operator's online rebuild under
// a write load.

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/storagetest"
	"github.com/ordoplane/ordo/test/testagent"
)

// rebuildTimeout bounds each wait: a failure guard, not a pace.
const rebuildTimeout = 60 * time.Second

func startRebuildAgent(t *testing.T, cfg agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func serverConfig(dir string) agent.Config {
	cfg := testagent.ServerConfig(dir)
	cfg.BootstrapExpect = 1
	cfg.Scheduler.Disabled = true
	return cfg
}

// writeNamespaces applies n namespaces named prefix-<i> with w writers.
func writeNamespaces(t *testing.T, c *testagent.Client, addr, prefix string, n, w int) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				res, err := c.PutNamespace(context.Background(), addr, fmt.Sprintf("%s-%d", prefix, i), "")
				if err != nil || res.Status != http.StatusOK {
					t.Errorf("put namespace: %v %+v", err, res)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// gated is a projection at a new version whose Apply stops at its gateAt-th
// event until gate closes: the rebuild on start waits there while the test
// looks at the server.
type gated struct {
	projections.Projection
	calls  *atomic.Int64
	gateAt int64
	gate   chan struct{}
}

func (g gated) Version() int { return g.Projection.Version() + 1 }

func (g gated) Apply(tx *projections.Tx, ev *events.Event) error {
	if g.calls.Add(1) == g.gateAt {
		<-g.gate
	}
	return g.Projection.Apply(tx, ev)
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestVersionBumpRebuildsOnStart: a server restarted with a build where
// the namespaces projection changed version rebuilds it from the archive
// before serving. Meanwhile /v1/agent/health answers 503 with the
// rebuild's progress and reads answer 503 saying why (a stale projection
// never serves as if current); then the server serves the rebuilt
// projection, equal to a from-scratch rebuild.
func TestVersionBumpRebuildsOnStart(t *testing.T) {
	dir := t.TempDir()
	c := testagent.NewClient(10 * time.Second)
	defer c.Close()
	a := startRebuildAgent(t, serverConfig(dir))
	addr := a.HTTPAddr()
	testagent.WaitFor(t, rebuildTimeout, "a leader", func() bool { return c.Healthy(addr) })
	writeNamespaces(t, c, addr, "ns", 300, 8)
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}

	cfg := serverConfig(dir)
	cfg.HTTPAddr = freeAddr(t)
	g := gated{calls: new(atomic.Int64), gateAt: 100, gate: make(chan struct{})}
	for _, p := range all.Projections() {
		if p.Name() == "namespaces" {
			g.Projection = p
			cfg.Projections = append(cfg.Projections, g)
			continue
		}
		cfg.Projections = append(cfg.Projections, p)
	}
	started := make(chan *agent.Agent, 1)
	go func() {
		a, err := agent.Start(cfg)
		if err != nil {
			t.Error(err)
		}
		started <- a
	}()
	addr = cfg.HTTPAddr
	var health struct {
		Projections map[string]httpapi.ProjectionHealth `json:"projections"`
	}
	testagent.WaitFor(t, rebuildTimeout, "health reporting the rebuild", func() bool {
		resp, err := http.Get("http://" + addr + "/v1/agent/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable && json.NewDecoder(resp.Body).Decode(&health) == nil &&
			health.Projections["namespaces"].State == fsm.StateRebuilding
	})
	// The gate holds the rebuild before its first batch commits.
	if ph := health.Projections["namespaces"]; ph.Progress >= 1 || ph.LagEvents == 0 {
		t.Errorf("namespaces while rebuilding: %+v", ph)
	}
	if st := health.Projections["jobs"].State; st != fsm.StateReady {
		t.Errorf("jobs while namespaces rebuild: %q, want ready", st)
	}
	code, body := get(t, addr, "/v1/namespaces")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "rebuilt") {
		t.Errorf("a read while rebuilding: %d %s", code, body)
	}
	code, body = get(t, addr, "/v1/metrics?format=prometheus")
	if code != http.StatusOK || !strings.Contains(body, `ordo_projection_state{projection="namespaces",state="rebuilding"} 1`) {
		t.Errorf("metrics while rebuilding: %d, no rebuilding state gauge", code)
	}
	close(g.gate)
	a = <-started
	if a == nil {
		t.FailNow()
	}
	defer a.Shutdown()
	testagent.WaitFor(t, rebuildTimeout, "a healthy server", func() bool { return c.Healthy(addr) })
	names, err := c.NamespaceNames(addr, false)
	if err != nil || len(names) < 301 {
		t.Fatalf("namespaces after the rebuild: %d (%v)", len(names), err)
	}
	code, body = get(t, addr, "/v1/metrics?format=prometheus")
	if code != http.StatusOK || !strings.Contains(body, `ordo_projection_state{projection="namespaces",state="ready"} 1`) ||
		!strings.Contains(body, `ordo_projection_rebuild_events_total{projection="namespaces"}`) {
		t.Errorf("metrics after the rebuild: %d", code)
	}
	snap := a.Store().Snapshot()
	defer snap.Close()
	checkProjections(t, snap, cfg.Projections)
}

// TestOnlineRebuildUnderWrites: an operator's online rebuild of every
// projection on a server taking writes from 8 clients, with reads served
// all along, ends identical to a from-scratch rebuild; verify then finds
// every projection equal to its rebuild.
func TestOnlineRebuildUnderWrites(t *testing.T) {
	c := testagent.NewClient(10 * time.Second)
	defer c.Close()
	a := startRebuildAgent(t, serverConfig(t.TempDir()))
	defer a.Shutdown()
	addr := a.HTTPAddr()
	testagent.WaitFor(t, rebuildTimeout, "a leader", func() bool { return c.Healthy(addr) })
	writeNamespaces(t, c, addr, "before", 700, 16)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var written, readFailures atomic.Int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 20000; i++ {
				res, err := c.PutNamespace(ctx, addr, fmt.Sprintf("during-%d-%d", w, i%300), "")
				if ctx.Err() != nil {
					return
				}
				if err != nil || res.Status != http.StatusOK {
					t.Errorf("write during the rebuild: %v %+v", err, res)
					return
				}
				written.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // reads keep being served from the old projections
		defer wg.Done()
		for ctx.Err() == nil {
			if code, _ := c.GetJSON(addr, "/v1/namespaces", nil); code != http.StatusOK && ctx.Err() == nil {
				readFailures.Add(1)
			}
		}
	}()
	testagent.WaitFor(t, rebuildTimeout, "writes under way", func() bool { return written.Load() > 50 })
	submitted := a.FSM().Applied()
	job := submit(t, addr, "rebuild", nil)
	job = waitJob(t, c, addr, job.ID)
	writtenBy := written.Load()
	stop()
	wg.Wait()
	if job.State != fsm.JobDone {
		t.Fatalf("rebuild job: %+v", job)
	}
	if job.Index <= submitted {
		t.Errorf("the rebuild switched at index %d, not past the %d applied when it began", job.Index, submitted)
	}
	if readFailures.Load() > 0 {
		t.Errorf("%d reads failed during the rebuild", readFailures.Load())
	}
	t.Logf("rebuild replayed %d events through index %d (submitted at %d) while %d writes were acknowledged", job.Events, job.Index, submitted, writtenBy)

	snap := a.Store().Snapshot()
	checkProjections(t, snap, all.Projections())
	snap.Close()

	job = waitJob(t, c, addr, submit(t, addr, "verify", nil).ID)
	if job.State != fsm.JobDone || len(job.Results) != len(all.Projections()) {
		t.Fatalf("verify job: %+v", job)
	}
	for _, r := range job.Results {
		if !r.Match {
			t.Errorf("verify %s: live %s, rebuilt %s", r.Projection, r.Live, r.Rebuilt)
		}
	}
	var list httpapi.ProjectionList
	if code, err := c.GetJSON(addr, "/v1/operator/projections?checksum=true", &list); err != nil || code != http.StatusOK {
		t.Fatalf("list: %d %v", code, err)
	}
	for _, p := range list.Projections {
		if p.State != fsm.StateReady || len(p.Checksum) != 64 || p.Version != p.StoredVersion {
			t.Errorf("list: %+v", p)
		}
	}
	if code, body := post(t, addr, "/v1/operator/projections/rebuild", `{"Projections":["nope"]}`); code != http.StatusBadRequest {
		t.Errorf("rebuild of an unknown projection: %d %s", code, body)
	}
	if code, body := post(t, addr, "/v1/operator/projections/rebuild", `{"Parallelism":-2}`); code != http.StatusBadRequest || !strings.Contains(body, "Parallelism") {
		t.Errorf("rebuild with parallelism -2: %d %s", code, body)
	}
	// Asked for, a rebuild replays every projection at once.
	b, _ := json.Marshal(httpapi.ProjectionJobRequest{Parallelism: -1})
	code, body := post(t, addr, "/v1/operator/projections/rebuild", string(b))
	if code != http.StatusAccepted {
		t.Fatalf("rebuild with parallelism -1: %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), &job); err != nil || job.Parallelism != len(all.Projections()) {
		t.Errorf("rebuild with parallelism -1: %+v (%v), want parallelism %d", job, err, len(all.Projections()))
	}
	if job = waitJob(t, c, addr, job.ID); job.State != fsm.JobDone {
		t.Errorf("rebuild with parallelism -1: %+v", job)
	}
}

// checkProjections fails t unless every projection of projs in r has the
// checksum of a from-scratch rebuild of r's archive.
func checkProjections(t *testing.T, r kv.Reader, projs []projections.Projection) {
	t.Helper()
	dst := openStore(t)
	if _, err := rebuild.Rebuild(r, dst, projs, 0, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range projs {
		live, err := projections.Checksum(r, p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := projections.Checksum(dst, p)
		if err != nil {
			t.Fatal(err)
		}
		if live != want {
			t.Errorf("projection %s: live %x, a from-scratch rebuild %x", p.Name(), live[:8], want[:8])
		}
	}
}

func submit(t *testing.T, addr, kind string, names []string) fsm.Job {
	t.Helper()
	b, _ := json.Marshal(httpapi.ProjectionJobRequest{Projections: names})
	code, body := post(t, addr, "/v1/operator/projections/"+kind, string(b))
	if code != http.StatusAccepted {
		t.Fatalf("%s: %d %s", kind, code, body)
	}
	var j fsm.Job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		t.Fatal(err)
	}
	return j
}

func waitJob(t *testing.T, c *testagent.Client, addr string, id uint64) fsm.Job {
	t.Helper()
	var j fsm.Job
	testagent.WaitFor(t, rebuildTimeout, fmt.Sprintf("job %d", id), func() bool {
		code, err := c.GetJSON(addr, "/v1/operator/projections/job", &j)
		return err == nil && code == http.StatusOK && j.ID == id && (j.State == fsm.JobDone || j.State == fsm.JobFailed)
	})
	return j
}

func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func post(t *testing.T, addr, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+path, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func openStore(t *testing.T) *kv.Store { return storagetest.OpenKV(t) }
