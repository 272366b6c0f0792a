package fleet_test

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/testlog"
	"github.com/ordoplane/ordo/tools/simfleet/fleet"
)

// startServer starts a dev server with short heartbeats: TTLs of 0.5–1 s
// and a 2 s grace, so a disconnected node is marked within ~3 s.
func startServer(t *testing.T) (string, *api.Client) {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.HeartbeatMinTTL = 500 * time.Millisecond
	cfg.HeartbeatGrace = 2 * time.Second
	cfg.MaxHeartbeatsPerSecond = 1000
	cfg.HTTP.MaxConnsPerClient = -1 // the whole simulated fleet connects from 127.0.0.1
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RaftLogOutput = io.Discard
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 10*time.Second, "the default namespace", func() bool {
		_, _, err := c.Namespaces().Info("default", nil)
		return err == nil
	})
	return a.HTTPAddr(), c
}

// runFleet runs f until the test ends, then checks that Run returned and
// left no goroutine of the package behind.
func runFleet(t *testing.T, f *fleet.Fleet) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var err error
	wg.Go(func() { err = f.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		waittest.For(t, 5*time.Second, "the fleet's goroutines to end", func() bool {
			buf := make([]byte, 1<<20)
			return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "simfleet/fleet.(*")
		})
	})
}

// statuses returns the status of each node the servers know, by id.
func statuses(t *testing.T, c *api.Client) map[string]string {
	list, _, err := c.Nodes().List(nil)
	if err != nil {
		t.Logf("list nodes: %v", err)
		return nil
	}
	out := map[string]string{}
	for _, n := range list {
		out[n.ID] = n.Status
	}
	return out
}

func countStatus(st map[string]string, ids []string, status string) int {
	n := 0
	for _, id := range ids {
		if st[id] == status {
			n++
		}
	}
	return n
}

func serviceJob(id string, count int) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	tg := api.NewTaskGroup("web", count)
	task := api.NewTask("server", "mock")
	cpu, mem := 100, 64
	task.Require(&api.Resources{CPU: &cpu, MemoryMB: &mem})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// running returns the job's allocations running per the servers, and on
// which nodes.
func running(t *testing.T, c *api.Client, job string) (int, map[string]int) {
	allocs, _, err := c.Jobs().Allocations(job, true, nil)
	if err != nil {
		t.Logf("job allocations: %v", err)
		return 0, nil
	}
	per := map[string]int{}
	n := 0
	for _, a := range allocs {
		if a.ClientStatus == "running" && a.DesiredStatus == "run" {
			n++
			per[a.NodeID]++
		}
	}
	return n, per
}

// Fifty simulated nodes register and become ready; a job of 100 ends with
// 100 allocations running as the servers report them; 10% of the nodes
// disconnect, miss their heartbeats and go down while their allocations
// are replaced on the others; they reconnect and become ready again.
func TestFleetAgainstDevServer(t *testing.T) {
	addr, c := startServer(t)
	calls := &testlog.Buffer{}
	f, err := fleet.New(fleet.Config{
		Servers: []string{addr}, Nodes: 50, Seed: 7,
		UpdateBatch: 20 * time.Millisecond, RetryBackoff: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(calls, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := f.NodeIDs()
	runFleet(t, f)

	// The servers see a node ready a moment before the fleet counts it.
	waittest.For(t, 15*time.Second, "50 nodes ready", func() bool {
		return countStatus(statuses(t, c), ids, "ready") == 50 && f.Stats().Ready == 50
	})
	if s := f.Stats(); s.Registrations != 50 {
		t.Fatalf("stats after start: %+v", s)
	}

	if _, _, err := c.Jobs().Register(serviceJob("web", 100), nil); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 15*time.Second, "100 allocations running", func() bool {
		n, _ := running(t, c, "web")
		return n == 100 && f.Stats().AllocsRunning == 100
	})

	gone := f.Disconnect(0.1)
	if len(gone) != 5 {
		t.Fatalf("disconnected %d nodes, want 5", len(gone))
	}
	if s := f.Stats(); s.Connected != 45 {
		t.Fatalf("connected = %d, want 45", s.Connected)
	}
	var stay []string
	isGone := map[string]bool{}
	for _, id := range gone {
		isGone[id] = true
	}
	for _, id := range ids {
		if !isGone[id] {
			stay = append(stay, id)
		}
	}
	waittest.For(t, 15*time.Second, "the disconnected nodes to miss their heartbeats", func() bool {
		return countStatus(statuses(t, c), gone, "down") == 5
	})
	if st := statuses(t, c); countStatus(st, stay, "ready") != 45 {
		t.Fatalf("connected nodes not all ready: %v", st)
	}
	waittest.For(t, 15*time.Second, "100 allocations running on the connected nodes", func() bool {
		n, per := running(t, c, "web")
		for _, id := range gone {
			if per[id] > 0 {
				return false
			}
		}
		return n == 100
	})

	back := f.Reconnect(1)
	if len(back) != 5 {
		t.Fatalf("reconnected %d nodes, want 5", len(back))
	}
	waittest.For(t, 15*time.Second, "the reconnected nodes to be ready", func() bool {
		return countStatus(statuses(t, c), ids, "ready") == 50
	})
	waittest.For(t, 15*time.Second, "the fleet to count 100 running", func() bool {
		return f.Stats().AllocsRunning == 100
	})
	if n, _ := running(t, c, "web"); n != 100 {
		t.Fatalf("%d allocations running after the reconnect, want 100", n)
	}
	s := f.Stats()
	if s.Registrations != 55 || s.Heartbeats == 0 || s.AllocUpdates["running"] < 100 {
		t.Fatalf("stats: %+v", s)
	}
	for k, v := range s.Errors {
		// A disconnect cancels calls in flight; those are not counted. Nothing
		// else should fail against a healthy server.
		t.Errorf("%d errors %s", v, k)
	}
	if t.Failed() {
		t.Logf("the fleet's failed calls:\n%s", calls)
	}
}
