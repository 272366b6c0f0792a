package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/broker"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// StateSource gives workers the applied index and snapshots of the projections.
type StateSource interface {
	// Applied returns the applied index and a channel closed at the next apply.
	Applied() (uint64, <-chan struct{})
	// State returns a consistent snapshot; release frees it.
	State() (st scheduler.State, release func(), err error)
}

// Planner verifies a plan against the latest state and commits what fits,
// together with evals (the eval's own update and any evals it created).
type Planner interface {
	Submit(ctx context.Context, plan *scheduler.Plan, evals []events.Evaluation) (plan.Result, uint64, error)
}

// Config configures a Worker.
type Config struct {
	// Broker, States and Planner are required.
	Broker  *broker.Broker
	States  StateSource
	Planner Planner
	// Types are the scheduler types served; default all four.
	Types []string
	// SyncLimit is how long to wait for the state to reach an eval's index; default 5s.
	SyncLimit time.Duration
	// BehindBackoff is how long an eval waits when the state stayed behind
	// (it comes back earlier once the state catches up); default 30s.
	BehindBackoff time.Duration
	// MaxPlanAttempts bounds re-planning after partial commits; default 5.
	MaxPlanAttempts int
	// Clock gives the leader time for eval updates and paces the waits;
	// default clock.System.
	Clock clock.Clock
	// Name identifies the worker in logs; default "worker".
	Name string
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Metrics are shared by the workers; nil records none.
	Metrics *Metrics
}

// Worker is one scheduler worker.
type Worker struct {
	cfg Config
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Types: []string{events.JobTypeService, events.JobTypeBatch, events.JobTypeSystem, events.JobTypeSysbatch},
		SyncLimit: 5 * time.Second, BehindBackoff: 30 * time.Second, MaxPlanAttempts: 5, Clock: clock.System{},
		Name: "worker", Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Broker == nil || c.States == nil || c.Planner == nil:
		return errors.New("worker: Broker, States and Planner are required")
	case c.SyncLimit < 0 || c.BehindBackoff < 0 || c.MaxPlanAttempts < 0:
		return errors.New("worker: SyncLimit, BehindBackoff and MaxPlanAttempts must not be negative")
	}
	return nil
}

// New returns a Worker.
func New(cfg Config) (*Worker, error) {
	if len(cfg.Types) == 0 {
		cfg.Types = nil // an empty list serves every type, as nil does
	}
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Worker{cfg: cfg}, nil
}

// Name implements supervisor.Processor.
func (w *Worker) Name() string { return w.cfg.Name }

// Run takes evals until ctx ends; a cancelled context is a clean shutdown.
func (w *Worker) Run(ctx context.Context) error {
	for {
		ev, token, err := w.cfg.Broker.Dequeue(ctx, w.cfg.Types)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, broker.ErrDisabled):
			// Leadership and the broker move together; wait for either.
			select {
			case <-ctx.Done():
				return nil
			case <-w.cfg.Clock.After(100 * time.Millisecond):
			}
			continue
		case err != nil:
			return fmt.Errorf("dequeue: %w", err)
		}
		start := w.cfg.Clock.Now()
		w.handle(ctx, ev, token)
		w.cfg.Metrics.observe(w.cfg.Clock.Now().Sub(start))
	}
}

func (w *Worker) handle(ctx context.Context, ev *events.Evaluation, token string) {
	log := w.cfg.Logger.With("worker", w.cfg.Name, "eval_id", ev.ID, "job_id", ev.JobID, "namespace", ev.Namespace)
	if err := w.waitFor(ctx, ev.ModifyIndex); err != nil {
		if ctx.Err() != nil {
			_ = w.cfg.Broker.Nack(ev.ID, token)
			return
		}
		w.cfg.Metrics.behind()
		log.Info("state behind the eval; handing it back", "wait_index", ev.ModifyIndex)
		_ = w.cfg.Broker.NackWait(ev.ID, token, w.cfg.BehindBackoff, w.reached(ev.ModifyIndex))
		return
	}
	if err := w.schedule(ctx, ev); err != nil {
		if errors.Is(err, plan.ErrEvalDeleted) {
			// Deleted while planned (eval delete, GC): its plan was refused
			// at apply and there is nothing left to schedule.
			log.Info("eval deleted while planned; dropped")
			if err := w.cfg.Broker.Ack(ev.ID, token); err != nil {
				log.Warn("ack failed", "err", err)
			}
			return
		}
		if ctx.Err() != nil {
			log.Info("shutting down; eval handed back")
		} else {
			log.Warn("scheduling failed; eval handed back", "err", err)
		}
		_ = w.cfg.Broker.Nack(ev.ID, token)
		return
	}
	if err := w.cfg.Broker.Ack(ev.ID, token); err != nil {
		log.Warn("ack failed", "err", err)
	}
}

// waitFor waits up to SyncLimit for the applied index to reach index.
func (w *Worker) waitFor(ctx context.Context, index uint64) error {
	limit := w.cfg.Clock.NewTimer(w.cfg.SyncLimit)
	defer limit.Stop()
	for {
		applied, next := w.cfg.States.Applied()
		if applied >= index {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-limit.C():
			return fmt.Errorf("applied index %d behind %d after %s", applied, index, w.cfg.SyncLimit)
		case <-next:
		}
	}
}

// reached returns a channel closed once the applied index reaches index;
// its watcher ends when the index is reached (or it is, already).
func (w *Worker) reached(index uint64) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		for {
			applied, next := w.cfg.States.Applied()
			if applied >= index {
				return
			}
			<-next
		}
	}()
	return out
}

// schedule computes and submits plans until one commits whole or the
// attempts run out.
func (w *Worker) schedule(ctx context.Context, ev *events.Evaluation) error {
	for attempt := 1; ; attempt++ {
		st, release, err := w.cfg.States.State()
		if err != nil {
			return err
		}
		plan, err := scheduler.Compute(st, ev)
		if e, ok := st.(interface{ Err() error }); ok && err == nil && e.Err() != nil {
			err = e.Err() // the state could not be read whole: do not trust the plan
		}
		release()
		if err != nil {
			return fmt.Errorf("compute: %w", err)
		}
		last := attempt >= w.cfg.MaxPlanAttempts
		res, _, err := w.cfg.Planner.Submit(ctx, plan, EvalUpdates(ev, plan, w.cfg.Clock.Now()))
		if err != nil {
			return fmt.Errorf("submit plan: %w", err)
		}
		if res.FullCommit() {
			return nil
		}
		if last {
			// Out of attempts with part of the plan refused: the eval fails,
			// as in Nomad, with a blocked eval that places the rest once
			// capacity changes; without this the eval would stay pending
			// in the log while the broker no longer held it.
			failed := &scheduler.Plan{EvalID: plan.EvalID, Namespace: plan.Namespace, JobID: plan.JobID,
				SnapshotIndex: plan.SnapshotIndex}
			res, _, err := w.cfg.Planner.Submit(ctx, failed, FailedEvalUpdates(ev, plan, w.cfg.Clock.Now()))
			if err != nil {
				return fmt.Errorf("submit failed eval: %w", err)
			}
			if !res.FullCommit() {
				return fmt.Errorf("failed eval %s not committed", ev.ID)
			}
			w.cfg.Logger.Warn("eval failed: plan attempts exhausted", "eval_id", ev.ID, "job_id", ev.JobID,
				"attempts", attempt)
			return nil
		}
		// Part of the plan did not fit: refresh past what rejected it.
		if err := w.waitFor(ctx, res.RefreshIndex); err != nil {
			return err
		}
	}
}

// EvalUpdates returns the evals to commit with a plan that fits whole: the
// eval itself, complete, with its snapshot index, queued counts, failures,
// links and the deployment it acted under, and a blocked eval when
// placements failed for lack of room. The plan's follow-ups are committed
// by the plan applier with any part of the plan. Ids are derived from the
// eval's, so a replay mints the same.
func EvalUpdates(ev *events.Evaluation, plan *scheduler.Plan, now time.Time) []events.Evaluation {
	up := *ev
	up.Status = events.EvalStatusComplete
	up.SnapshotIndex = plan.SnapshotIndex
	up.QueuedAllocations = plan.QueuedAllocations
	up.FailedTGAllocs = plan.FailedTGAllocs
	up.ModifyTime = now.UnixNano()
	if plan.DeploymentID != "" {
		up.DeploymentID = plan.DeploymentID
	}
	out := []events.Evaluation{}
	if plan.CreateBlockedEval {
		blocked := events.Evaluation{
			ID: scheduler.DeriveID(ev.ID, "blocked", 0), Namespace: ev.Namespace, Priority: ev.Priority, Type: ev.Type,
			TriggeredBy: events.EvalTriggerQueuedAllocs, JobID: ev.JobID, JobModifyIndex: ev.JobModifyIndex,
			Status: events.EvalStatusBlocked, StatusDescription: "created to place remaining allocations",
			PreviousEval: ev.ID, ClassEligibility: plan.ClassEligibility, EscapedComputedClass: plan.EscapedComputedClass,
			// The state it failed on: capacity freed after it unblocks it.
			SnapshotIndex: plan.SnapshotIndex,
			CreateTime:    now.UnixNano(), ModifyTime: now.UnixNano(),
		}
		up.BlockedEval = blocked.ID
		out = append(out, blocked)
	}
	if len(plan.FollowUps) > 0 {
		up.NextEval = plan.FollowUps[0].ID
	}
	return append([]events.Evaluation{up}, out...)
}

// EvalUpdates' counterpart when the plan attempts ran out with part of
// the last plan refused: the eval is failed ("maximum attempts reached")
// and a blocked eval, unblocked by any capacity change, retries the rest.
func FailedEvalUpdates(ev *events.Evaluation, plan *scheduler.Plan, now time.Time) []events.Evaluation {
	retry := *plan
	retry.CreateBlockedEval = true
	retry.ClassEligibility, retry.EscapedComputedClass = nil, true
	out := EvalUpdates(ev, &retry, now)
	out[0].Status = events.EvalStatusFailed
	out[0].StatusDescription = "maximum attempts reached"
	out[1].StatusDescription = "created to place allocations refused by the plan applier"
	return out
}

// Metrics are the workers' shared metrics.
type Metrics struct {
	busy      prometheus.Counter
	evals     prometheus.Counter
	behindCtr prometheus.Counter
}

// NewMetrics registers the workers' metrics with reg (nil registers none).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		busy: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_worker_busy_seconds_total",
			Help: "Seconds workers spent handling evals; its rate over the worker count is their utilisation."}),
		evals: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_worker_evals_total", Help: "Evals handled by workers."}),
		behindCtr: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_worker_state_behind_total",
			Help: "Evals handed back because the local state was behind them (N2)."}),
	}
	if reg != nil {
		reg.MustRegister(m.busy, m.evals, m.behindCtr)
	}
	return m
}

func (m *Metrics) observe(d time.Duration) {
	if m == nil {
		return
	}
	m.busy.Add(d.Seconds())
	m.evals.Inc()
}

func (m *Metrics) behind() {
	if m != nil {
		m.behindCtr.Inc()
	}
}
