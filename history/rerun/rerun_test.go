package rerun_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
	"github.com/ordoplane/ordo/processors/worker"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

// log is a state store fed through the FSM, entry by entry, the way a
// server's is: tests play the commands and the plan applier by hand.
type log struct {
	t     *testing.T
	store *kv.Store
	fsm   *fsm.FSM
	index uint64
}

func newLog(t *testing.T) *log {
	store := projectionstest.OpenStore(t)
	return &log{t: t, store: store, fsm: projectionstest.NewFSM(t, store)}
}

// append commits one entry of payloads and returns its index.
func (l *log) append(payloads ...events.Payload) uint64 {
	l.t.Helper()
	l.index++
	res := projectionstest.ApplyOne(l.t, l.fsm, l.index, projectionstest.Entry(l.t, fmt.Sprintf("cmd-%d", l.index), payloads...))
	if res.Err != nil {
		l.t.Fatalf("entry %d: %v", l.index, res.Err)
	}
	return l.index
}

// register commits job with its pending eval ev, as a job register does,
// and records the entry's index as ev's modify index.
func (l *log) register(job *events.Job, ev *events.Evaluation) uint64 {
	l.t.Helper()
	ev.ModifyIndex = l.append(&events.JobRegistered{Job: *job}, &events.EvalsUpserted{Evals: []events.Evaluation{*ev}})
	return ev.ModifyIndex
}

// compute runs the scheduler on the current state, as a worker does.
func (l *log) compute(ev *events.Evaluation) *scheduler.Plan {
	l.t.Helper()
	snap := l.store.Snapshot()
	defer snap.Close()
	st, err := schedstate.New(projections.NewView(snap))
	if err != nil {
		l.t.Fatal(err)
	}
	p, err := scheduler.Compute(st, ev)
	if err != nil || st.Err() != nil {
		l.t.Fatalf("compute: %v, %v", err, st.Err())
	}
	return p
}

// commit commits placements as the plan applier would (commands/plan),
// with evals when the plan fits whole.
func (l *log) commit(evalID string, placements []events.Allocation, updates []events.AllocDesiredUpdate, evals []events.Evaluation) uint64 {
	l.t.Helper()
	var ps []events.Payload
	if len(placements) > 0 {
		ps = append(ps, &events.AllocsPlaced{EvalID: evalID, Allocs: placements})
	}
	if len(updates) > 0 {
		ps = append(ps, &events.AllocsDesiredUpdated{EvalID: evalID, Updates: updates})
	}
	if len(evals) > 0 {
		ps = append(ps, &events.EvalsUpserted{Evals: evals})
	}
	return l.append(ps...)
}

func readyNode(id string, cpu int) *events.NodeRegistered {
	return &events.NodeRegistered{Node: events.Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default",
		Attributes: map[string]string{"kernel.name": "linux"}, Resources: events.NodeResources{CPU: cpu, MemoryMB: 8192},
		Drivers: map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}, Status: events.NodeStatusReady}}
}

func pendingEval(id, job string) events.Evaluation {
	return events.Evaluation{ID: id, Namespace: "default", Priority: 50, Type: events.JobTypeService,
		TriggeredBy: events.EvalTriggerJobRegister, JobID: job, Status: events.EvalStatusPending,
		CreateTime: projectionstest.LeaderTime, ModifyTime: projectionstest.LeaderTime}
}

func encode(t *testing.T, p *scheduler.Plan) []byte {
	t.Helper()
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A worker whose first plan the applier commits only in part plans again
// on newer state: the completing commit is that second plan, whole, and
// re-running the eval at its snapshot index reproduces it byte for byte;
// the first attempt's commit is reported as refused in part, not as a
// divergence.
func TestRerunAfterPartialCommit(t *testing.T) {
	l := newLog(t)
	l.append(readyNode("n1", 1000), readyNode("n2", 1000), readyNode("n3", 1000))
	job := schedulertest.Job("web", events.JobTypeService, 5) // 500 MHz each: 6 fit
	ev := pendingEval("e-1", "web")
	evIndex := l.append(&events.JobRegistered{Job: *job}, &events.EvalsUpserted{Evals: []events.Evaluation{ev}})
	ev.ModifyIndex = evIndex

	first := l.compute(&ev)
	if len(first.Placements) != 5 {
		t.Fatalf("first plan places %d", len(first.Placements))
	}
	// The applier refuses every node but the first placement's: its
	// placements there commit, without the eval's update.
	refusedFrom := first.Placements[0].NodeID
	var kept []events.Allocation
	for _, a := range first.Placements {
		if a.NodeID == refusedFrom {
			kept = append(kept, a)
		}
	}
	partial := l.commit(ev.ID, kept, nil, nil)
	// Something else happens before the worker plans again.
	l.append(readyNode("n4", 1000))

	second := l.compute(&ev)
	if len(second.Placements) != 5-len(kept) {
		t.Fatalf("second plan places %d, want %d", len(second.Placements), 5-len(kept))
	}
	final := l.commit(ev.ID, second.Placements, append(second.Stops, second.Updates...),
		worker.EvalUpdates(&ev, second, time.Unix(0, projectionstest.LeaderTime)))

	rec, err := rerun.Recorded(l.store, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Decided() || rec.SnapshotIndex != second.SnapshotIndex || rec.Final.Index != final {
		t.Fatalf("record: decided %v, snapshot %d (want %d), final %+v (want at %d)",
			rec.Decided(), rec.SnapshotIndex, second.SnapshotIndex, rec.Final, final)
	}
	if rec.Eval.Status != events.EvalStatusPending || rec.Eval.ModifyIndex != evIndex {
		t.Fatalf("eval scheduled: %s at %d, want pending at %d", rec.Eval.Status, rec.Eval.ModifyIndex, evIndex)
	}
	if len(rec.Earlier) != 1 || rec.Earlier[0].Index != partial || len(rec.Earlier[0].Placements) != len(kept) {
		t.Fatalf("earlier commits = %+v, want the partial one at %d", rec.Earlier, partial)
	}
	if !bytes.Equal(encode(t, rec.Plan()), encode(t, second)) {
		t.Fatalf("recorded plan\n%+v\nis not the committed plan\n%+v", rec.Plan(), second)
	}

	plan, err := rerun.Rerun(l.store, ev.ID, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, plan), encode(t, second)) {
		t.Fatalf("re-run plan\n%+v\ndiffers from the committed plan\n%+v", plan, second)
	}
	d := rerun.Diff(rec, plan)
	if !d.Empty() || len(d.Earlier) != 1 {
		t.Fatalf("diff: %s", d)
	}
}

// A plan that cannot place everything records a blocked eval; the re-run
// asks for the same one, with the same failure metrics.
func TestRerunBlockedPlan(t *testing.T) {
	l := newLog(t)
	l.append(readyNode("n1", 1000), readyNode("n2", 600))
	job := schedulertest.Job("big", events.JobTypeService, 5)
	ev := pendingEval("e-2", "big")
	l.register(job, &ev)
	p := l.compute(&ev)
	if !p.CreateBlockedEval || len(p.FailedTGAllocs) == 0 {
		t.Fatalf("plan = %+v, want failed placements", p)
	}
	l.commit(ev.ID, p.Placements, nil, worker.EvalUpdates(&ev, p, time.Unix(0, projectionstest.LeaderTime+1)))

	rec, err := rerun.Recorded(l.store, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := rerun.Rerun(l.store, ev.ID, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if d := rerun.Diff(rec, plan); !d.Empty() {
		t.Fatalf("diff: %s", d)
	}
	if !bytes.Equal(encode(t, plan), encode(t, p)) {
		t.Fatalf("re-run plan\n%+v\ndiffers from\n%+v", plan, p)
	}
	// The blocked eval was recorded, never completed: nothing to re-run.
	blocked := scheduler.DeriveID(ev.ID, "blocked", 0)
	if _, err := rerun.Rerun(l.store, blocked, t.TempDir()); !errors.Is(err, rerun.ErrNotDecided) {
		t.Fatalf("re-run of the blocked eval: %v, want ErrNotDecided", err)
	}
	if _, err := rerun.Recorded(l.store, "no-such-eval"); !errors.Is(err, rerun.ErrNoEval) {
		t.Fatalf("recorded of an unknown eval: %v, want ErrNoEval", err)
	}
}

// The replay tests compare nodes: they would catch a scheduler drawing on
// unseeded randomness only if the seed decides something. With identical
// nodes every placement is a tie that the seeded shuffle breaks, so the
// eval id alone moves placements between nodes, while the same eval id
// always picks the same ones.
func TestEvalIDSeedDecidesTies(t *testing.T) {
	st := scheduler.NewMemState()
	for i := range 8 {
		st.UpsertNode(schedulertest.Node(fmt.Sprintf("node-%d", i)))
	}
	job := schedulertest.Job("web", events.JobTypeService, 2)
	st.UpsertJob(job)
	nodesOf := func(evalID string) string {
		ev := pendingEval(evalID, "web")
		p, err := scheduler.Compute(st, &ev)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, a := range p.Placements {
			out += a.Name + "@" + a.NodeID + " "
		}
		return out
	}
	seen := map[string]bool{}
	for i := range 16 {
		id := fmt.Sprintf("eval-%d", i)
		got := nodesOf(id)
		if again := nodesOf(id); again != got {
			t.Fatalf("eval %s placed %s, then %s", id, got, again)
		}
		seen[got] = true
	}
	if len(seen) < 4 {
		t.Fatalf("16 eval ids over 8 tied nodes gave only %d distinct placements: %v", len(seen), seen)
	}
}

// On a cluster of many walk groups (processors/scheduler walk.go) a
// bin packing plan keeps to the groups of its eval's draw; re-running
// each eval on the state rebuilt at its snapshot index draws the same
// groups and reproduces its plan byte for byte.
func TestRerunOnManyWalkGroups(t *testing.T) {
	l := newLog(t)
	var nodes []events.Payload
	for i := range 200 {
		nodes = append(nodes, readyNode(fmt.Sprintf("node-%03d", i), 1000))
	}
	l.append(nodes...)
	var plans []*scheduler.Plan
	var evs []events.Evaluation
	for i := range 3 {
		job := schedulertest.Job(fmt.Sprintf("web-%d", i), events.JobTypeService, 40) // 500 MHz: 2 a node
		ev := pendingEval(fmt.Sprintf("e-%d", i), job.ID)
		l.register(job, &ev)
		p := l.compute(&ev)
		if len(p.Placements) != 40 {
			t.Fatalf("eval %s places %d, want 40", ev.ID, len(p.Placements))
		}
		l.commit(ev.ID, p.Placements, nil, worker.EvalUpdates(&ev, p, time.Unix(0, projectionstest.LeaderTime)))
		plans, evs = append(plans, p), append(evs, ev)
	}
	for i, ev := range evs {
		plan, err := rerun.Rerun(l.store, ev.ID, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encode(t, plan), encode(t, plans[i])) {
			t.Fatalf("eval %s: re-run plan\n%+v\ndiffers from the committed plan\n%+v", ev.ID, plan, plans[i])
		}
		rec, err := rerun.Recorded(l.store, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := rerun.Diff(rec, plan); !d.Empty() {
			t.Fatalf("eval %s: diff: %s", ev.ID, d)
		}
	}
}
