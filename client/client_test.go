package client_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/exec"
	"github.com/ordoplane/ordo/client/driver/mock"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startServer starts a dev server and returns its address and a nomad/api
// client of it.
func startServer(t *testing.T) (string, *api.Client) {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Logger = quiet()
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
	testagent.WaitFor(t, 10*time.Second, "the default namespace", func() bool {
		_, _, err := c.Namespaces().Info("default", nil)
		return err == nil
	})
	return a.HTTPAddr(), c
}

// countingDriver counts the starts and recovers of the driver it wraps,
// across client processes, and fails the test when one attempt starts twice.
type countingDriver struct {
	driver.Driver
	t        *testing.T
	counts   *counts
	recovers *atomic.Int64
}

type counts struct {
	mu     sync.Mutex
	starts map[string]int
}

func (c *counts) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.starts {
		n += v
	}
	return n
}

func (d *countingDriver) Start(ctx context.Context, cfg driver.TaskConfig) (driver.Handle, error) {
	d.counts.mu.Lock()
	d.counts.starts[cfg.ID]++
	twice := d.counts.starts[cfg.ID] > 1
	d.counts.mu.Unlock()
	if twice {
		d.t.Errorf("start attempt %s started twice", cfg.ID)
	}
	return d.Driver.Start(ctx, cfg)
}

func (d *countingDriver) Recover(ctx context.Context, s driver.HandleState) (driver.Handle, error) {
	h, err := d.Driver.Recover(ctx, s)
	if err == nil {
		d.recovers.Add(1)
	}
	return h, err
}

// runClient runs a client on dataDir against the server at addr until the
// returned stop is called (or the test ends).
// With destroy, the client kills its tasks when it stops; otherwise it
// leaves them running, as a client restart does.
func runClient(t *testing.T, addr, dataDir string, destroy bool, drivers ...driver.Driver) (*client.Client, func()) {
	t.Helper()
	return startClient(t, client.Config{DataDir: dataDir, Servers: []string{addr}, Drivers: drivers, DestroyOnShutdown: destroy})
}

// runClientGC runs a client that keeps gcMax terminal allocations.
func runClientGC(t *testing.T, addr, dataDir string, gcMax int, drivers ...driver.Driver) (*client.Client, func()) {
	t.Helper()
	return startClient(t, client.Config{DataDir: dataDir, Servers: []string{addr}, Drivers: drivers,
		DestroyOnShutdown: true, GCMaxAllocs: gcMax})
}

// startClient runs a client of cfg with the tests' short intervals.
func startClient(t *testing.T, cfg client.Config) (*client.Client, func()) {
	t.Helper()
	cfg.NodeName = "test-node"
	cfg.UpdateInterval, cfg.RetryMin, cfg.RetryMax = 20*time.Millisecond, 50*time.Millisecond, 500*time.Millisecond
	if cfg.WatchWait == 0 {
		cfg.WatchWait = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet()
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("client run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return c, stop
}

func waitNodeReady(t *testing.T, nc *api.Client, id string) {
	t.Helper()
	testagent.WaitFor(t, 20*time.Second, "the node to be ready", func() bool {
		n, _, err := nc.Nodes().Info(id, nil)
		return err == nil && n.Status == "ready"
	})
}

func pointer[T any](v T) *T { return &v }

// mockJob is a service job of count allocations running the mock driver.
func mockJob(id string, count int, cfg map[string]any, rp *api.RestartPolicy) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	tg := api.NewTaskGroup("web", count)
	tg.RestartPolicy = rp
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: pointer(0), Unlimited: pointer(false)}
	task := api.NewTask("server", "mock")
	for k, v := range cfg {
		task.SetConfig(k, v)
	}
	task.Require(&api.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// allocs returns the job's allocations by id.
func allocs(t *testing.T, nc *api.Client, job string) []*api.AllocationListStub {
	t.Helper()
	list, _, err := nc.Jobs().Allocations(job, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func allStatus(t *testing.T, nc *api.Client, job string, n int, status string) func() bool {
	return func() bool {
		list := allocs(t, nc, job)
		if len(list) != n {
			return false
		}
		for _, a := range list {
			if a.ClientStatus != status {
				return false
			}
		}
		return true
	}
}

// The client registers, runs a job's allocations and reports them
// running; a failing task is restarted per its policy and its allocation
// fails after the attempts; stopping a job stops its allocations, which
// are reported complete.
func TestClientRunsJobs(t *testing.T) {
	addr, nc := startServer(t)
	md, err := mock.New(mock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := runClient(t, addr, t.TempDir(), true, md)
	waitNodeReady(t, nc, c.NodeID())
	node, _, err := nc.Nodes().Info(c.NodeID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if node.Name != "test-node" || node.Attributes["driver.mock"] != "1" || node.Resources == nil || node.Resources.CPU == nil || *node.Resources.CPU == 0 {
		t.Errorf("node %s attributes %v resources %+v", node.Name, node.Attributes, node.Resources)
	}

	if _, _, err := nc.Jobs().Register(mockJob("web", 3, map[string]any{"run_for": "1h"}, nil), nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "3 allocations running", allStatus(t, nc, "web", 3, "running"))

	rp := &api.RestartPolicy{Attempts: pointer(2), Interval: pointer(time.Hour), Delay: pointer(50 * time.Millisecond), Mode: pointer("fail")}
	if _, _, err := nc.Jobs().Register(mockJob("flaky", 1, map[string]any{"run_for": "50ms", "exit_code": 1}, rp), nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "the flaky allocation to fail", allStatus(t, nc, "flaky", 1, "failed"))
	a, _, err := nc.Allocations().Info(allocs(t, nc, "flaky")[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := a.TaskStates["server"]
	var types []string
	for _, e := range ts.Events {
		types = append(types, e.Type)
	}
	if ts.State != "dead" || !ts.Failed || ts.Restarts != 2 || types[len(types)-1] != "Not Restarting" {
		t.Errorf("flaky task: %s failed=%v restarts=%d events %v", ts.State, ts.Failed, ts.Restarts, types)
	}
	if n := strings.Count(strings.Join(types, ","), "Started"); n != 3 {
		t.Errorf("%d starts, want 3: %v", n, types)
	}

	if _, _, err := nc.Jobs().Deregister("web", false, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "the stopped job's allocations to complete", allStatus(t, nc, "web", 3, "complete"))
	for _, s := range allocs(t, nc, "web") {
		if s.DesiredStatus != "stop" || s.TaskStates["server"].State != "dead" || s.TaskStates["server"].Failed {
			t.Errorf("alloc %s: desired %s, task %+v", s.ID, s.DesiredStatus, s.TaskStates["server"])
		}
	}
}

// A client restarted on the same data directory keeps its node id,
// re-attaches to its running tasks and starts nothing again.
func TestClientRestartReattaches(t *testing.T) {
	addr, nc := startServer(t)
	dataDir := t.TempDir()
	cs := &counts{starts: map[string]int{}}
	var recovers atomic.Int64
	newDriver := func() driver.Driver {
		md, err := mock.New(mock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return &countingDriver{Driver: md, t: t, counts: cs, recovers: &recovers}
	}
	c1, stop1 := runClient(t, addr, dataDir, false, newDriver())
	waitNodeReady(t, nc, c1.NodeID())
	if _, _, err := nc.Jobs().Register(mockJob("web", 2, map[string]any{"run_for": "1h"}, nil), nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "2 allocations running", allStatus(t, nc, "web", 2, "running"))
	stop1()

	c2, _ := runClient(t, addr, dataDir, true, newDriver())
	if c2.NodeID() != c1.NodeID() {
		t.Fatalf("node id %s after restart, was %s", c2.NodeID(), c1.NodeID())
	}
	testagent.WaitFor(t, 20*time.Second, "both tasks re-attached", func() bool { return recovers.Load() == 2 })
	for _, s := range allocs(t, nc, "web") {
		r, ok := c2.Runner(s.ID)
		if !ok {
			t.Fatalf("no runner for %s after restart", s.ID)
		}
		u, _ := r.ClientUpdate()
		if u.ClientStatus != "running" || u.TaskStates["server"].Restarts != 0 {
			t.Errorf("alloc %s after restart: %+v", s.ID, u)
		}
	}
	if n := cs.total(); n != 2 {
		t.Errorf("%d starts in all, want 2", n)
	}
	// The restarted client still acts on the servers' changes.
	if _, _, err := nc.Jobs().Deregister("web", false, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "the allocations to complete", allStatus(t, nc, "web", 2, "complete"))
	if n := cs.total(); n != 2 {
		t.Errorf("%d starts in all, want 2", n)
	}
}

// With the exec driver a real process runs, its output lands in the
// alloc's log directory, and stopping the job kills it after its
// shutdown_delay — at once with no_shutdown_delay (N23).
func TestExecShutdownDelay(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	addr, nc := startServer(t)
	ed, err := exec.New(exec.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ed.Close() })
	dataDir := t.TempDir()
	c, _ := runClient(t, addr, dataDir, true, ed)
	waitNodeReady(t, nc, c.NodeID())

	const delay = 1500 * time.Millisecond
	for _, noDelay := range []bool{false, true} {
		id := map[bool]string{false: "sh-delay", true: "sh-nodelay"}[noDelay]
		job := api.NewServiceJob(id, id, "global", 50)
		job.Datacenters = []string{"dc1"}
		tg := api.NewTaskGroup("sh", 1)
		task := api.NewTask("sh", "exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", "echo hello; sleep 30"})
		task.ShutdownDelay = delay
		task.KillTimeout = pointer(5 * time.Second)
		task.Require(&api.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
		tg.AddTask(task)
		job.AddTaskGroup(tg)
		if _, _, err := nc.Jobs().Register(job, nil); err != nil {
			t.Fatal(err)
		}
		testagent.WaitFor(t, 20*time.Second, id+" running", allStatus(t, nc, id, 1, "running"))
		allocID := allocs(t, nc, id)[0].ID
		stdout := dataDir + "/alloc/" + allocID + "/alloc/logs/sh.stdout"
		testagent.WaitFor(t, 10*time.Second, "hello in "+stdout, func() bool {
			b, _ := os.ReadFile(stdout)
			return strings.Contains(string(b), "hello")
		})

		// ordo job stop [-no-shutdown-delay]
		if _, _, err := nc.Jobs().DeregisterOpts(id, &api.DeregisterOptions{NoShutdownDelay: noDelay}, nil); err != nil {
			t.Fatal(err)
		}
		testagent.WaitFor(t, 20*time.Second, id+"'s allocation complete", func() bool {
			a, _, err := nc.Allocations().Info(allocID, nil)
			return err == nil && a.ClientStatus == "complete"
		})
		a, _, err := nc.Allocations().Info(allocID, nil)
		if err != nil {
			t.Fatal(err)
		}
		var killing, killed int64
		var signal int
		for _, e := range a.TaskStates["sh"].Events {
			switch e.Type {
			case "Killing":
				killing = e.Time
			case "Killed":
				killed, signal = e.Time, e.Signal
			}
		}
		if killing == 0 || killed == 0 {
			t.Fatalf("%s: no Killing/Killed events: %+v", id, a.TaskStates["sh"].Events)
		}
		took := time.Duration(killed - killing)
		if noDelay && took >= delay {
			t.Errorf("%s: killed %v after Killing, want less than the shutdown delay %v", id, took, delay)
		}
		if !noDelay && (took < delay || took > delay+4*time.Second) {
			t.Errorf("%s: killed %v after Killing, want the shutdown delay %v", id, took, delay)
		}
		if signal != 15 {
			t.Errorf("%s: killed by signal %d, want SIGTERM", id, signal)
		}
	}
}
