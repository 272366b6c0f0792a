package capacity_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/capacity"
	"github.com/ordoplane/ordo/processors/launcher"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/local"
	"github.com/ordoplane/ordo/processors/launcher/driver/sim"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	plauncher "github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/waittest"
)

// seed is a command that appends the events it holds: the test plays
// the scheduler, the clients and the operator.
type seed []events.Payload

func (seed) Validate() error { return nil }
func (s seed) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: s}, nil
}

type fixture struct {
	t     *testing.T
	fsm   *fsm.FSM
	p     *commands.Pipeline
	clock *clocktest.Clock
	pools []capacity.Pool
	proc  *capacity.Processor
	stop  func()
}

func quiet() *slog.Logger {
	if os.Getenv("CAPACITY_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newFixture(t *testing.T, pools ...capacity.Pool) *fixture {
	t.Helper()
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	clock := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	p := commandstest.NewPipeline(t, commands.PipelineConfig{Log: &pt.FSMLog{FSM: fsm}, Store: store, Applied: fsm.Applied,
		Clock: clock, Logger: quiet()})
	f := &fixture{t: t, fsm: fsm, p: p, clock: clock, pools: pools}
	f.startProc()
	t.Cleanup(func() { f.stopProc() })
	return f
}

// startProc starts a new processor, as a new leader would.
func (f *fixture) startProc() {
	f.t.Helper()
	proc, err := capacity.New(capacity.Config{Pipeline: f.p, State: f.fsm, Pools: f.pools, Clock: f.clock, Logger: quiet()})
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = proc.Run(ctx) }()
	f.proc, f.stop = proc, func() { cancel(); <-done }
}

// stopProc stops the running processor, as a lost leadership would.
func (f *fixture) stopProc() {
	if f.stop != nil {
		f.stop()
		f.stop = nil
	}
}

// ctxRun runs fn until the test ends.
func ctxRun(t *testing.T, fn func(context.Context) error) func() {
	return func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = fn(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
}

func (f *fixture) run(start func()) { start() }

// startLauncher runs the launcher with a sim provider "cloud" serving
// label small (zero boot time) on the fixture's clock.
func (f *fixture) startLauncher() {
	f.t.Helper()
	l, err := launcher.New(launcher.Config{Pipeline: f.p, State: f.fsm, Clock: f.clock, Logger: quiet(), PollInterval: time.Second,
		Drivers: map[string]launcher.Factory{"sim": func(cfg events.ProviderConfig) (driver.Driver, error) {
			return sim.New(*cfg.Sim, sim.Faults{}), nil
		}}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.run(ctxRun(f.t, l.Run))
	f.submit("provider.apply", lcmd.ApplyProvider{Config: events.ProviderConfig{Name: "cloud", Driver: "sim",
		Pools:  []events.ProviderPool{{Name: "main", Labels: []string{"small"}}},
		Labels: []events.LabelConfig{{Name: "small", InstanceType: "small"}},
		Sim:    &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{"small": {Cores: 2, RAMMB: 2048}}}}})
}

func (f *fixture) submit(name string, c commands.Command) {
	f.t.Helper()
	if _, err := f.p.Run(context.Background(), name, commands.Request{Actor: "test"}, c); err != nil {
		f.t.Fatalf("%s: %v", name, err)
	}
}

func (f *fixture) seed(evs ...events.Payload) { f.t.Helper(); f.submit("seed", seed(evs)) }

// settle waits until the processor's last pass followed everything
// applied and acted on nothing: a pass stores what it followed only
// after its commands applied, so a pass that acted leaves Applied past
// Seen.
func (f *fixture) settle() {
	f.t.Helper()
	if !waittest.Poll(10*time.Second, func() bool { return f.proc.Seen() == f.fsm.Applied() }) {
		f.t.Fatalf("processor did not settle: seen %d, applied %d", f.proc.Seen(), f.fsm.Applied())
	}
}

func (f *fixture) view(fn func(v projections.View)) {
	snap := f.fsm.Store().Snapshot()
	defer snap.Close()
	fn(projections.NewView(snap))
}

// requests returns the processor's requests of pool by state.
func (f *fixture) requests(pool string) map[string][]*plauncher.Request {
	out := map[string][]*plauncher.Request{}
	f.view(func(v projections.View) {
		err := plauncher.ScanRequests(v, "", "", func(r *plauncher.Request) error {
			if r.Requestor == capacity.Requestor(pool) {
				out[r.State] = append(out[r.State], r)
			}
			return nil
		})
		if err != nil {
			f.t.Fatal(err)
		}
	})
	return out
}

func count(m map[string][]*plauncher.Request) int {
	n := 0
	for _, rs := range m {
		n += len(rs)
	}
	return n
}

func job(id, pool string, count int) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Name: id, Namespace: "default", Type: events.JobTypeBatch, Priority: 50,
		Datacenters: []string{"dc1"}, NodePool: pool, TaskGroups: []events.TaskGroup{{Name: "g", Count: count}}}}
}

// blocked returns the evals a worker commits when placements of job's
// group g failed in an empty pool: the complete eval with its failures
// and the blocked eval it created, computed at snapshot.
func blocked(jobID string, failed int, snapshot uint64) *events.EvalsUpserted {
	done := events.Evaluation{ID: "e-" + jobID, Namespace: "default", Priority: 50, Type: events.JobTypeBatch, JobID: jobID,
		TriggeredBy: events.EvalTriggerJobRegister, Status: events.EvalStatusComplete, BlockedEval: "b-" + jobID,
		QueuedAllocations: map[string]int{"g": failed}, SnapshotIndex: snapshot,
		FailedTGAllocs: map[string]*events.AllocMetric{"g": {NodesInPool: 0, CoalescedFailures: failed - 1}}}
	blk := events.Evaluation{ID: "b-" + jobID, Namespace: "default", Priority: 50, Type: events.JobTypeBatch, JobID: jobID,
		TriggeredBy: events.EvalTriggerQueuedAllocs, Status: events.EvalStatusBlocked, PreviousEval: done.ID, SnapshotIndex: snapshot}
	return &events.EvalsUpserted{Evals: []events.Evaluation{done, blk}}
}

// Requests are bounded per pool and de-duplicated: a blocked eval with 5
// placements failed gets exactly MaxRequests (3) requests, and more
// passes — more changes, the same eval upserted again — file no more. A
// pool that is not mapped, and a failure more nodes cannot fix (every
// node filtered by a constraint), get none.
func TestRequestsBoundedAndDeduplicated(t *testing.T) {
	f := newFixture(t, capacity.Pool{Name: "batch", Label: "small", MaxRequests: 3, IdleTimeout: time.Hour},
		capacity.Pool{Name: "gpu", Label: "big", MaxRequests: 5, IdleTimeout: time.Hour})
	f.seed(job("big", "batch", 5), job("other", "elsewhere", 2), job("filtered", "gpu", 2))
	f.seed(blocked("big", 5, f.fsm.Applied()), blocked("other", 2, f.fsm.Applied()))
	cons := blocked("filtered", 2, f.fsm.Applied())
	cons.Evals[0].FailedTGAllocs["g"] = &events.AllocMetric{NodesEvaluated: 2, NodesFiltered: 2, ConstraintFiltered: map[string]int{"${attr.kernel.name} = windows": 2}}
	f.seed(cons)
	f.settle()
	if got := f.requests("batch"); len(got[events.RequestRequested]) != 3 || count(got) != 3 {
		t.Fatalf("pool batch: requests %v, want 3 requested (bounded by max_requests)", got)
	}
	for _, r := range f.requests("batch")[events.RequestRequested] {
		if len(r.Labels) != 1 || r.Labels[0] != "small" {
			t.Fatalf("request %s labels %v, want [small]", r.ID, r.Labels)
		}
	}
	if n := count(f.requests("elsewhere")) + count(f.requests("gpu")); n != 0 {
		t.Fatalf("%d requests for an unmapped pool or a constraint failure, want 0", n)
	}
	// Each request is filed with its link to the blocked eval, in the
	// same entry (so the eval's history leads to it).
	links := 0
	for _, ev := range pt.Archived(t, f.fsm.Store()) {
		if ev.Type != "CapacityRequested" {
			continue
		}
		p, err := events.Decode(ev)
		if err != nil {
			t.Fatal(err)
		}
		c := p.(*events.CapacityRequested)
		if c.Pool != "batch" || len(c.Evals) != 1 || c.Evals[0] != "b-big" || c.Placements != 5 {
			t.Fatalf("link %+v, want pool batch, eval b-big, 5 placements", c)
		}
		links++
	}
	if links != 3 {
		t.Fatalf("%d CapacityRequested events, want one per request (3)", links)
	}
	// More changes: the same blocked eval again, an unrelated job.
	f.seed(blocked("big", 5, f.fsm.Applied()))
	f.seed(job("unrelated", "batch", 1))
	f.settle()
	if got := f.requests("batch"); count(got) != 3 {
		t.Fatalf("after more passes: %d requests, want still 3 (de-duplicated)", count(got))
	}
}

// A new leader's processor restores its requests from the projections:
// the requests filed before the change of leader count, and it files
// none twice.
func TestNewLeaderFilesNothingTwice(t *testing.T) {
	f := newFixture(t, capacity.Pool{Name: "batch", Label: "small", MaxRequests: 10, IdleTimeout: time.Hour})
	f.seed(job("a", "batch", 4))
	f.seed(blocked("a", 4, f.fsm.Applied()))
	f.settle()
	if n := count(f.requests("batch")); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
	f.stopProc()
	f.seed(job("unrelated", "batch", 1)) // a change while no one leads
	f.startProc()
	f.settle()
	f.seed(blocked("a", 4, f.fsm.Applied())) // the eval blocked again, as a new leader's scheduler may
	f.settle()
	if n := count(f.requests("batch")); n != 4 {
		t.Fatalf("after a change of leader: %d requests, want still 4", n)
	}
}

// One outstanding request per needed instance: 2 placements failed with
// MaxRequests 10 get 2 requests; a second job blocked in the same pool
// adds its own, and no pass files more than the sum.
func TestOneRequestPerNeededInstance(t *testing.T) {
	f := newFixture(t, capacity.Pool{Name: "batch", Label: "small", MaxRequests: 10, IdleTimeout: time.Hour})
	f.seed(job("a", "batch", 2), job("b", "batch", 1))
	f.seed(blocked("a", 2, f.fsm.Applied()))
	f.settle()
	if n := count(f.requests("batch")); n != 2 {
		t.Fatalf("%d requests for 2 failed placements, want 2", n)
	}
	f.seed(blocked("b", 1, f.fsm.Applied()))
	f.settle()
	f.seed(job("unrelated", "batch", 1))
	f.settle()
	if n := count(f.requests("batch")); n != 3 {
		t.Fatalf("%d requests for 3 failed placements, want 3", n)
	}
}

// Requests no longer needed are released: when the job whose eval is
// blocked is stopped, or the blocked eval places elsewhere, its open
// requests are deleted; while an eval of the pool is pending (about to
// be scheduled) nothing is released.
func TestReleaseWhenNotNeeded(t *testing.T) {
	f := newFixture(t, capacity.Pool{Name: "batch", Label: "small", MaxRequests: 10, IdleTimeout: time.Hour})
	f.seed(job("a", "batch", 3), job("b", "batch", 1))
	f.seed(blocked("a", 3, f.fsm.Applied()))
	f.settle()
	if n := count(f.requests("batch")); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	// An eval of the pool pending: the blocked eval of a is unblocked
	// (pending) while the scheduler runs it: nothing is released.
	unblocked := blocked("a", 3, 0).Evals[1]
	unblocked.Status = events.EvalStatusPending
	f.seed(&events.EvalsUpserted{Evals: []events.Evaluation{unblocked}})
	f.settle()
	if n := count(f.requests("batch")); n != 3 {
		t.Fatalf("%d requests while the eval is pending, want 3 (held)", n)
	}
	// It blocks again, still needing 3, then the job is stopped.
	f.seed(blocked("a", 3, f.fsm.Applied()))
	f.settle()
	stopped := job("a", "batch", 3)
	stopped.Job.Stop = true
	f.seed(stopped)
	f.settle()
	if got := f.requests("batch"); count(got) != 0 {
		t.Fatalf("after the job stopped: requests %v, want none", got)
	}

	// b's eval blocks for 1 placement, then places it elsewhere (capacity
	// freed on a node already there): its request goes too.
	f.seed(blocked("b", 1, f.fsm.Applied()))
	f.settle()
	if n := count(f.requests("batch")); n != 1 {
		t.Fatalf("%d requests for b, want 1", n)
	}
	placed := blocked("b", 1, 0).Evals[1]
	placed.Status = events.EvalStatusComplete
	f.seed(&events.EvalsUpserted{Evals: []events.Evaluation{placed}})
	f.settle()
	if got := f.requests("batch"); count(got) != 0 {
		t.Fatalf("after b's eval placed: requests %v, want none", got)
	}
}

// An idle launched node is returned after the pool's idle timeout, on
// the processor's clock: the launcher fulfils the request with a sim
// instance, a node registers on it (meta names the instance), it gets an
// allocation then loses it; the idle timer starts then, the node is
// drained and the request deleted once IdleTimeout has passed — not
// before — the launcher deletes the instance, and the node is
// deregistered.
func TestIdleReturnAfterTimeout(t *testing.T) {
	f := newFixture(t, capacity.Pool{Name: "batch", Label: "small", MaxRequests: 10, IdleTimeout: 10 * time.Minute})
	f.startLauncher()
	f.seed(job("a", "batch", 1))
	f.seed(blocked("a", 1, f.fsm.Applied()))
	var req *plauncher.Request
	waittest.For(t, 10*time.Second, "a fulfilled request", func() bool {
		f.clock.Advance(time.Second) // the launcher polls its create machines on the clock
		got := f.requests("batch")[events.RequestFulfilled]
		if len(got) == 1 {
			req = got[0]
		}
		return req != nil
	})
	inst := req.Instances[0]
	// The client registers; the eval places an alloc on it and completes.
	f.seed(&events.NodeRegistered{Node: events.Node{ID: "n1", Name: inst, Datacenter: "dc1", NodePool: "batch",
		Status: events.NodeStatusReady, Meta: map[string]string{local.InstanceMetaKey: inst},
		Resources: events.NodeResources{CPU: 1000, MemoryMB: 1024}}})
	done := blocked("a", 1, 0).Evals[1]
	done.Status = events.EvalStatusComplete
	f.seed(&events.EvalsUpserted{Evals: []events.Evaluation{done}},
		&events.AllocsPlaced{EvalID: done.ID, Allocs: []events.Allocation{{ID: "a1", Namespace: "default", JobID: "a", TaskGroup: "g",
			NodeID: "n1", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}}})
	f.settle()
	f.clock.Advance(time.Hour) // busy: no idle time accrues
	f.settle()
	if n := count(f.requests("batch")); n != 1 {
		t.Fatalf("busy node: %d requests, want 1 kept", n)
	}
	f.seed(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}})
	f.settle()
	f.clock.Advance(9 * time.Minute)
	f.settle()
	if n := count(f.requests("batch")); n != 1 {
		t.Fatalf("idle 9m of 10m: %d requests, want 1 kept", n)
	}
	f.view(func(v projections.View) {
		if n, err := nodes.Get(v, "n1"); err != nil || n.Drain {
			t.Fatalf("node n1 before the timeout: %+v, %v; want not draining", n, err)
		}
	})
	f.clock.Advance(time.Minute)
	waittest.For(t, 10*time.Second, "the request deleted, the instance deleted and the node deregistered", func() bool {
		f.clock.Advance(time.Second) // the launcher polls its delete machines on the clock
		gone := true
		f.view(func(v projections.View) {
			_, errR := plauncher.GetRequest(v, req.ID)
			in, errI := plauncher.GetInstance(v, inst)
			_, errN := nodes.Get(v, "n1")
			gone = errR != nil && errI != nil && errN != nil
			if os.Getenv("CAPACITY_LOG") != "" && in != nil {
				t.Logf("request %v instance %s node %v", errR, in.State, errN)
			}
		})
		return gone
	})
	if n := count(f.requests("batch")); n != 0 {
		t.Fatalf("%d requests after the return, want 0 (no demand)", n)
	}
}
