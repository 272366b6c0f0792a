package e2e

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/processors/broker"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/worker"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/test/testagent"
)

// TestEvalFailsAfterLastPartialPlan: a worker re-plans when the plan
// applier commits a plan only in part, up to MaxPlanAttempts; when the last
// attempt is refused in part too, the eval is failed ("maximum attempts
// reached") with a blocked eval that retries the rest on capacity changes,
// as Nomad does. (It used to be acked and left pending in the log forever:
// the applier commits the eval's own update only with a whole plan.) A
// failed eval is not a decision history/rerun can re-run.
//
// Here the applier sees the only node as not ready (a state it reads that
// differs from the worker's: the race in which a node stops being ready
// between a plan and its verification, made permanent), so it refuses
// every attempt.
func TestEvalFailsAfterLastPartialPlan(t *testing.T) {
	a, c := startAgent(t, func(cfg *agent.Config) { cfg.Scheduler.Disabled = true })
	readyNode(t, a, "n0")
	register(t, c, job("service", "web", 1, 100))
	snap := a.Store().Snapshot()
	list, err := evals.ByJob(projections.NewView(snap), "default", "web")
	snap.Close()
	if err != nil || len(list) != 1 || list[0].Status != events.EvalStatusPending {
		t.Fatalf("evals of web: %v, %v", list, err)
	}
	ev := list[0].Evaluation

	b, err := broker.New(broker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(true)
	src := &schedstate.Source{Store: a.Store(), Notifier: a.FSM().Notifier()}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ap, err := plan.New(plan.Config{Pipeline: a.Pipeline(), States: notReady{src, "n0"}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	const attempts = 3
	sub := &countingPlanner{Planner: ap}
	w, err := worker.New(worker.Config{Broker: b, States: src, Planner: sub, MaxPlanAttempts: attempts, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{ap.Run, w.Run} {
		wg.Go(func() {
			if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				t.Error(err)
			}
		})
	}
	defer wg.Wait()
	defer cancel()
	b.Enqueue(&ev, time.Now())
	testagent.WaitFor(t, settleTimeout, "the worker to give the eval back after its last attempt", func() bool {
		s := b.Stats()
		return sub.calls.Load() >= attempts && s.Ready+s.Unacked+s.Waiting+s.Delayed == 0
	})

	snap = a.Store().Snapshot()
	defer snap.Close()
	got, err := evals.Get(projections.NewView(snap), ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := rerun.Recorded(snap, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Decided() {
		t.Fatalf("an eval no attempt of which fit whole is recorded as decided at %d", rec.SnapshotIndex)
	}
	if _, err := rerun.Rerun(snap, ev.ID, t.TempDir()); !errors.Is(err, rerun.ErrNotDecided) {
		t.Fatalf("re-run: %v, want ErrNotDecided", err)
	}
	if got.Status != events.EvalStatusFailed || got.StatusDescription != "maximum attempts reached" {
		t.Fatalf("after %d refused attempts eval %s is %s (%q), want failed (maximum attempts reached)",
			sub.calls.Load(), ev.ID, got.Status, got.StatusDescription)
	}
	if got.BlockedEval == "" {
		t.Fatal("the failed eval names no blocked eval")
	}
	blocked, err := evals.Get(projections.NewView(snap), got.BlockedEval)
	if err != nil {
		t.Fatalf("blocked eval %s: %v", got.BlockedEval, err)
	}
	if blocked.Status != events.EvalStatusBlocked || blocked.PreviousEval != ev.ID || !blocked.EscapedComputedClass {
		t.Fatalf("blocked eval = %+v", blocked.Evaluation)
	}
}

// countingPlanner counts submitted plans.
type countingPlanner struct {
	worker.Planner
	calls atomic.Int64
}

func (p *countingPlanner) Submit(ctx context.Context, plan *scheduler.Plan, evs []events.Evaluation) (plan.Result, uint64, error) {
	defer p.calls.Add(1)
	return p.Planner.Submit(ctx, plan, evs)
}

// notReady is a state source in which one node is initializing.
type notReady struct {
	src  *schedstate.Source
	node string
}

func (s notReady) State() (scheduler.State, func(), error) {
	st, release, err := s.src.State()
	if err != nil {
		return nil, nil, err
	}
	return notReadyState{st, s.node}, release, nil
}

type notReadyState struct {
	scheduler.State
	node string
}

func (s notReadyState) Node(id string) (*scheduler.Node, bool) {
	n, ok := s.State.Node(id)
	if ok && id == s.node {
		c := *n
		c.Status = events.NodeStatusInitializing
		return &c, true
	}
	return n, ok
}
