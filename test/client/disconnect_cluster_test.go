package client

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/mock"
	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/test/replay"
	"github.com/ordoplane/ordo/test/testagent"
)

const (
	// waitTimeout bounds every wait: a failure guard, not a pace.
	waitTimeout = 20 * time.Second

	// The server hands out TTLs of 500ms to 1s and counts a heartbeat
	// missed two seconds after that: a cut client is disconnected within
	// three seconds, and the others keep two seconds of slack. (A node
	// that misses a heartbeat its client never saw fail stays
	// initializing: see TestLateHeartbeatReconnects.)
	heartbeatMinTTL = 500 * time.Millisecond
	heartbeatGrace  = 2 * time.Second

	jobID    = "web"
	taskName = "server"
	// count allocations of jobCPU MHz each; every node has nodeMHz, so
	// two fit on a node.
	count   = 4
	jobCPU  = 400
	nodeMHz = 1000

	descReconnected = "alloc not needed as the original allocation reconnected"
)

// cluster is an in-process dev server and the client agents run against it.
type cluster struct {
	t     *testing.T
	agent *agent.Agent
	api   *api.Client
	// proc is a fake /proc, so every node has nodeMHz and 1 GiB.
	proc string
}

// clientNode is one client agent: its data directory survives a restart of its
// process, and its transport (gate) and driver (recorder) are shared by
// its processes.
type clientNode struct {
	name    string
	dataDir string
	gate    *gate
	rec     *recorder
	// clock drives the node's mock tasks.
	clock *clocktest.Clock

	mu struct {
		sync.Mutex
		c    *client.Client
		stop func()
	}
}

// startCluster starts a one-server dev agent with short heartbeat TTLs.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	cfg := testagent.DevConfig(t.TempDir())
	cfg.HeartbeatMinTTL, cfg.HeartbeatGrace = heartbeatMinTTL, heartbeatGrace
	a, c := testagent.StartDev(t, cfg)
	return &cluster{t: t, agent: a, api: c, proc: fakeProc(t)}
}

// fakeProc writes a /proc of one core of nodeMHz and 1 GiB of memory.
func fakeProc(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"cpuinfo":              fmt.Sprintf("processor\t: 0\nmodel name\t: test cpu\ncpu MHz\t\t: %d.000\n", nodeMHz),
		"meminfo":              "MemTotal:        1048576 kB\n",
		"sys/kernel/osrelease": "6.1.0-test\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// addNode starts a client agent called name and waits for it to be ready.
func (cl *cluster) addNode(name string) *clientNode {
	cl.t.Helper()
	n := &clientNode{name: name, dataDir: cl.t.TempDir(), gate: newGate(cl.t), clock: clocktest.NewClock(time.Unix(1_800_000_000, 0))}
	md, err := mock.New(mock.Config{Clock: n.clock})
	if err != nil {
		cl.t.Fatal(err)
	}
	n.rec = newRecorder(cl.t, md)
	cl.start(n)
	cl.waitNode(n, events.NodeStatusReady)
	return n
}

// start runs a client process for n (its first, or the next after
// restart). A process that stops leaves its tasks running, as a client
// that restarts does; n's recorder kills them when the test ends.
func (cl *cluster) start(n *clientNode) {
	cl.t.Helper()
	c, err := client.New(client.Config{DataDir: n.dataDir, Servers: []string{cl.agent.HTTPAddr()},
		NodeName: n.name, Drivers: []driver.Driver{n.rec}, ProcRoot: cl.proc,
		HTTPClient: &http.Client{Transport: n.gate}, UpdateInterval: 20 * time.Millisecond,
		RetryMin: 50 * time.Millisecond, RetryMax: 250 * time.Millisecond, WatchWait: 30 * time.Second,
		// Calls the gate holds must not time out before the test releases them.
		RequestTimeout: 2 * waitTimeout,
		Logger:         testagent.Discard()})
	if err != nil {
		cl.t.Fatal(err)
	}
	stop := testagent.Run(cl.t, "client "+n.name, c.Run)
	n.mu.Lock()
	n.mu.c, n.mu.stop = c, stop
	n.mu.Unlock()
}

// restart stops n's client process, which leaves its tasks running, and
// starts the next one on the same data directory.
func (cl *cluster) restart(n *clientNode) {
	cl.t.Helper()
	n.mu.Lock()
	stop := n.mu.stop
	n.mu.Unlock()
	stop()
	cl.start(n)
}

// client returns n's current client process.
func (n *clientNode) client() *client.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.c
}

// id returns n's node id.
func (n *clientNode) id() string { return n.client().NodeID() }

// view calls f on a snapshot of the server's projections.
func (cl *cluster) view(f func(v projections.View)) {
	snap := cl.agent.Store().Snapshot()
	defer snap.Close()
	f(projections.NewView(snap))
}

// waitState waits until cond holds on the server's state, waking on every
// apply.
func (cl *cluster) waitState(what string, cond func(v projections.View) bool) {
	cl.t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		_, wake := cl.agent.FSM().Notifier().Applied()
		ok := false
		cl.view(func(v projections.View) { ok = cond(v) })
		if ok {
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			cl.t.Fatalf("timed out after %v waiting for %s; the servers have:\n%s", waitTimeout, what, cl.dump())
		}
	}
}

// dump describes the nodes, evals and allocations of the server's state,
// for failure messages.
func (cl *cluster) dump() string {
	var b strings.Builder
	cl.view(func(v projections.View) {
		list, _ := nodes.List(v, "")
		for _, n := range list {
			fmt.Fprintf(&b, "node %s %s %s (%s)\n", n.ID, n.Name, n.Status, n.StatusDescription)
		}
		_ = evals.Scan(v, evals.Query{}, func(e *evals.Eval) error {
			fmt.Fprintf(&b, "eval %s job %s %s %s at %d: failed %v\n", e.ID, e.JobID, e.TriggeredBy, e.Status, e.SnapshotIndex, e.FailedTGAllocs)
			return nil
		})
		for _, job := range []string{jobID, "side", "pinned", "pinned-initializing"} {
			for _, a := range jobAllocs(cl.t, v, job) {
				fmt.Fprintf(&b, "alloc %s %s on %s: desired %s (%s), client %s, prev %s\n", a.ID, a.Name, a.NodeID,
					a.DesiredStatus, a.DesiredDescription, a.ClientStatus, a.PreviousAllocation)
			}
		}
	})
	return b.String()
}

func (cl *cluster) nodeStatus(n *clientNode) string {
	cl.t.Helper()
	var s string
	cl.view(func(v projections.View) { s = statusOf(cl.t, v, n.id()) })
	return s
}

func statusOf(t *testing.T, v projections.View, id string) string {
	t.Helper()
	nd, err := nodes.Get(v, id)
	if err != nil {
		t.Fatal(err)
	}
	return nd.Status
}

func (cl *cluster) waitNode(n *clientNode, status string) {
	cl.t.Helper()
	cl.waitState(n.name+" "+status, func(v projections.View) bool {
		nd, err := nodes.Get(v, n.id())
		return err == nil && nd.Status == status
	})
}

// jobAllocs returns the job's allocations in creation order.
func jobAllocs(t *testing.T, v projections.View, job string) []*allocs.Alloc {
	t.Helper()
	list, err := allocs.ByJob(v, "default", job)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// settle waits until the scheduler has nothing left to do.
func (cl *cluster) settle() {
	cl.t.Helper()
	replay.WaitSettled(cl.t, cl.agent.Store(), cl.agent.FSM().Notifier(), waitTimeout)
}

// register registers job and fails the test if it is refused.
func (cl *cluster) register(job *api.Job) {
	cl.t.Helper()
	if _, _, err := cl.api.Jobs().Register(job, nil); err != nil {
		cl.t.Fatalf("register %s: %v", *job.ID, err)
	}
}

// webJobTolerating is the service job of count mock allocations running for an
// hour; tolerate sets how its group tolerates disconnects. Its deployment
// takes an allocation healthy after 50ms, so the clients have reported
// everything before a test cuts one off.
func webJobTolerating(tolerate func(tg *api.TaskGroup)) *api.Job {
	job := api.NewServiceJob(jobID, jobID, "global", 50)
	job.Datacenters = []string{"dc1"}
	tg := api.NewTaskGroup("web", count)
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	tg.Update = &api.UpdateStrategy{MaxParallel: new(count), HealthCheck: new("task_states"),
		MinHealthyTime: new(50 * time.Millisecond), HealthyDeadline: new(time.Minute), ProgressDeadline: new(2 * time.Minute)}
	tolerate(tg)
	task := api.NewTask(taskName, "mock").SetConfig("run_for", "1h")
	task.Require(&api.Resources{CPU: new(jobCPU), MemoryMB: new(64)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// pinnedJob is a job of one mock allocation that runs only on node name
// for runFor by that node's clock: a batch job whose group tolerates
// disconnects without replacement (it stays on its node), or a service
// job that does not.
func pinnedJob(id, name string, batch bool, runFor time.Duration) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	if batch {
		job = api.NewBatchJob(id, id, "global", 50)
	}
	job.Datacenters = []string{"dc1"}
	job.Constrain(api.NewConstraint("${node.unique.name}", "=", name))
	tg := api.NewTaskGroup(id, 1)
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	if batch {
		tg.Disconnect = &api.DisconnectStrategy{LostAfter: new(time.Hour), Replace: new(false)}
	}
	task := api.NewTask(id, "mock").SetConfig("run_for", runFor.String())
	task.Require(&api.Resources{CPU: new(50), MemoryMB: new(16)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// ids returns the sorted ids of list.
func ids(list []*allocs.Alloc) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.ID)
	}
	slices.Sort(out)
	return out
}
