package worker

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/broker"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// fakeStates is a StateSource whose applied index the test moves.
type fakeStates struct {
	mu      sync.Mutex
	applied uint64
	next    chan struct{}
	st      *scheduler.MemState
}

func newStates(applied uint64) *fakeStates {
	st := scheduler.NewMemState()
	for _, id := range []string{"n1", "n2", "n3"} {
		st.UpsertNode(schedulertest.Node(id))
	}
	st.UpsertJob(schedulertest.Job("web", events.JobTypeService, 2))
	return &fakeStates{applied: applied, next: make(chan struct{}), st: st}
}

func (f *fakeStates) Applied() (uint64, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied, f.next
}

func (f *fakeStates) advance(to uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = to
	close(f.next)
	f.next = make(chan struct{})
}

func (f *fakeStates) State() (scheduler.State, func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.SetIndex(f.applied)
	return f.st, func() {}, nil
}

// recorder is a Planner that commits everything and remembers what it got.
type recorder struct {
	mu    sync.Mutex
	plans []*scheduler.Plan
	evals [][]events.Evaluation
}

func (r *recorder) Submit(_ context.Context, p *scheduler.Plan, evals []events.Evaluation) (plan.Result, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans = append(r.plans, p)
	r.evals = append(r.evals, evals)
	return plan.Result{Placements: p.Placements}, p.SnapshotIndex + 1, nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.plans)
}

func setup(t *testing.T, applied uint64) (*broker.Broker, *fakeStates, *recorder, *Worker) {
	b, err := broker.New(broker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(true)
	states := newStates(applied)
	rec := &recorder{}
	w, err := New(Config{Broker: b, States: states, Planner: rec, SyncLimit: time.Second, BehindBackoff: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return b, states, rec, w
}

func pending(modifyIndex uint64) *events.Evaluation {
	return &events.Evaluation{ID: "eval-1", Namespace: "default", JobID: "web", Priority: 50, Type: events.JobTypeService,
		TriggeredBy: events.EvalTriggerJobRegister, Status: events.EvalStatusPending, ModifyIndex: modifyIndex}
}

// N2: a worker whose state is behind the eval does not schedule it; it
// hands it back and takes it again as soon as the state catches up.
func TestWorkerWaitsForTheEvalsIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, states, rec, w := setup(t, 5)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		b.Enqueue(pending(10), time.Now())

		time.Sleep(2 * time.Second) // past the sync limit
		synctest.Wait()
		if rec.count() != 0 {
			t.Fatal("scheduled on a state behind the eval")
		}
		if s := b.Stats(); s.Delayed != 1 {
			t.Fatalf("eval not handed back: %+v", s)
		}
		states.advance(10)
		synctest.Wait()
		if rec.count() != 1 {
			t.Fatalf("eval not scheduled once the state caught up (%d plans)", rec.count())
		}
		if si := rec.plans[0].SnapshotIndex; si < 10 {
			t.Fatalf("plan computed at index %d, before the eval's 10", si)
		}
		if up := rec.evals[0][0]; up.ID != "eval-1" || up.Status != events.EvalStatusComplete || up.SnapshotIndex < 10 {
			t.Fatalf("eval update %+v", up)
		}
		if s := b.Stats(); s != (broker.Stats{}) {
			t.Fatalf("eval not acked: %+v", s)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("shutdown reported as an error: %v", err)
		}
	})
}

// A state that catches up within the sync limit schedules without a handback.
func TestWorkerSchedulesWhenStateCatchesUpInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, states, rec, w := setup(t, 5)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go w.Run(ctx)
		b.Enqueue(pending(7), time.Now())
		synctest.Wait()
		states.advance(7)
		synctest.Wait()
		if rec.count() != 1 || b.Stats().Delayed != 0 {
			t.Fatalf("plans %d, stats %+v", rec.count(), b.Stats())
		}
	})
}

// A shutdown while waiting returns the eval to the broker, not as a failure.
func TestWorkerShutdownIsNotAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _, rec, w := setup(t, 1)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		b.Enqueue(pending(99), time.Now())
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v, want nil on shutdown", err)
		}
		if rec.count() != 0 || len(b.DequeueFailed()) != 0 {
			t.Fatal("a shutdown scheduled or failed the eval")
		}
	})
}
