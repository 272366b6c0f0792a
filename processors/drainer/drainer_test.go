package drainer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/drainer"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/waittest"
)

type fixture struct {
	t     *testing.T
	fsm   *fsm.FSM
	log   *pt.FSMLog
	p     *commands.Pipeline
	clock *clocktest.Clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	clock := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	l := &pt.FSMLog{FSM: fsm}
	var mu sync.Mutex
	n := 0
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: l, Store: store, Applied: fsm.Applied, Clock: clock,
		Logger: quiet(), IDs: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("id-%04d", n)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return &fixture{t: t, fsm: fsm, log: l, p: p, clock: clock}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// apply appends payloads as one entry, as another writer (a client, the
// scheduler) would.
func (f *fixture) apply(payloads ...events.Payload) {
	f.t.Helper()
	e := pt.Entry(f.t, fmt.Sprintf("setup-%d", f.fsm.Applied()+1), payloads...)
	data, err := events.EncodeEntry(e)
	if err != nil {
		f.t.Fatal(err)
	}
	res, _, _ := f.log.Append(context.Background(), data)
	if r := res.(fsm.Result); r.Err != nil {
		f.t.Fatal(r.Err)
	}
}

func (f *fixture) run(name string, c commands.Command) {
	f.t.Helper()
	if _, err := f.p.Run(context.Background(), name, commands.Request{Actor: "test"}, c); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) view() projections.View {
	snap := f.fsm.Store().Snapshot()
	f.t.Cleanup(func() { snap.Close() })
	return projections.NewView(snap)
}

// marked returns the ids of the allocations marked to migrate.
func (f *fixture) marked() []string {
	f.t.Helper()
	var out []string
	err := allocs.Scan(f.view(), allocs.Query{}, func(a *allocs.Alloc) error {
		if a.DesiredTransition.Migrate != nil && *a.DesiredTransition.Migrate {
			out = append(out, a.ID)
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// settle waits until the drainer has decided on the latest applied index
// (so whatever it was going to do about it is applied) and cond holds. The
// deadline is a failure guard only.
func (f *fixture) settle(d *drainer.Drainer, what string, cond func() bool) {
	f.t.Helper()
	if !waittest.Poll(10*time.Second, func() bool { return d.Seen() >= f.fsm.Applied() && cond() }) {
		f.t.Fatalf("timed out waiting for %s (drainer at %d, applied %d, marked %v)", what, d.Seen(), f.fsm.Applied(), f.marked())
	}
}

// metric returns the value of the named gauge or counter in reg, of the
// series whose one label has value label ("" for none); 0 when absent.
func metric(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func regNode(id string) *events.NodeRegistered {
	return &events.NodeRegistered{Node: events.Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default",
		Status: events.NodeStatusReady, Resources: events.NodeResources{CPU: 4000, MemoryMB: 4096}}}
}

func running(id, nodeID string, index int) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", EvalID: "e0", Name: fmt.Sprintf("web.g[%d]", index),
		NodeID: nodeID, JobID: "web", TaskGroup: "g", DesiredStatus: events.AllocDesiredRun,
		ClientStatus: events.AllocClientRunning}
}

func webJob() *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: "web", Name: "web", Namespace: "default", Type: events.JobTypeService,
		Priority: 50, TaskGroups: []events.TaskGroup{{Name: "g", Count: 3, Tasks: []events.Task{{Name: "t", Driver: "exec"}}}}}}
}

// TestDeadlineForcesTheRest runs the drainer over a real pipeline with a
// fake clock: one allocation of the group migrates at a time (nothing
// replaces it here, so the others wait); when the drain's deadline passes
// on the clock, the rest are marked at once; once all are stopped the
// drainer completes the drain, leaving the node ineligible.
func TestDeadlineForcesTheRest(t *testing.T) {
	f := newFixture(t)
	f.apply(regNode("n1"), regNode("n2"), webJob(),
		&events.AllocsPlaced{EvalID: "e0", Allocs: []events.Allocation{running("a1", "n1", 0), running("a2", "n1", 1), running("a3", "n1", 2)}})
	reg := prometheus.NewRegistry()
	d, err := drainer.New(drainer.Config{Pipeline: f.p, State: f.fsm, Clock: f.clock, Logger: quiet(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	f.settle(d, "the drainer to start", func() bool { return true })
	if m := f.marked(); len(m) != 0 {
		t.Fatalf("marked %v before any drain", m)
	}
	f.run("node.drain", node.UpdateDrain{ID: "n1", Spec: &node.DrainSpec{Deadline: time.Hour}})
	f.settle(d, "one allocation marked", func() bool { return len(f.marked()) == 1 })
	if m := f.marked(); m[0] != "a1" {
		t.Fatalf("marked %v, want [a1]", m)
	}
	if got := metric(t, reg, "ordo_drainer_draining_nodes", ""); got != 1 {
		t.Fatalf("draining gauge = %v", got)
	}

	// Short of the deadline nothing more happens; past it, the rest go.
	f.clock.Advance(59 * time.Minute)
	f.settle(d, "the drainer to settle before the deadline", func() bool { return true })
	if m := f.marked(); len(m) != 1 {
		t.Fatalf("marked %v before the deadline", m)
	}
	f.clock.Advance(time.Minute)
	f.settle(d, "every allocation marked at the deadline", func() bool { return len(f.marked()) == 3 })

	// The scheduler stops them (here, by hand): the drain is complete.
	stop := func(id string) events.AllocDesiredUpdate {
		return events.AllocDesiredUpdate{ID: id, DesiredStatus: events.AllocDesiredStop, DesiredDescription: "alloc is being migrated"}
	}
	f.apply(&events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{stop("a1"), stop("a2"), stop("a3")}})
	var n *nodes.Node
	f.settle(d, "the drain to complete", func() bool {
		n, err = nodes.Get(f.view(), "n1")
		return err == nil && !n.Drain
	})
	if n.DrainStrategy != nil || n.SchedulingEligibility != events.NodeIneligible {
		t.Fatalf("completed node = %+v", n)
	}
	var completed *events.Event
	for _, ev := range pt.Archived(t, f.fsm.Store()) {
		if ev.Type == "NodeDrainUpdated" {
			completed = ev
		}
	}
	if completed == nil || completed.Actor != "system:drainer" {
		t.Fatalf("drain completion event = %+v", completed)
	}
	for name, want := range map[string]float64{"paced": 1, "deadline": 2} {
		if got := metric(t, reg, "ordo_drainer_allocs_marked_total", name); got != want {
			t.Errorf("marked{reason=%s} = %v, want %v", name, got, want)
		}
	}
	if got := metric(t, reg, "ordo_drainer_draining_nodes", ""); got != 0 {
		t.Errorf("draining gauge after completion = %v", got)
	}

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	goleak.VerifyNone(t, before)
}

func TestConfig(t *testing.T) {
	if _, err := drainer.New(drainer.Config{}); err == nil {
		t.Fatal("New without a pipeline succeeded")
	}
	f := newFixture(t)
	if _, err := drainer.New(drainer.Config{Pipeline: f.p, State: f.fsm, RetryInterval: -1}); err == nil {
		t.Fatal("negative RetryInterval accepted")
	}
}
