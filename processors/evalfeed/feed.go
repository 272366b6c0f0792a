package evalfeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/eval"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/broker"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// Config configures a Feed.
type Config struct {
	// Broker, Pipeline, Store and Notifier are required.
	Broker   *broker.Broker
	Pipeline *commands.Pipeline
	Store    *kv.Store
	Notifier *projections.Notifier
	// Restore lists the pending and blocked evals in a view; required.
	Restore func(v projections.View) (pending, blocked []*events.Evaluation, err error)
	// FailedFollowUpDelay delays the follow-up of a failed eval; default 1m.
	FailedFollowUpDelay time.Duration
	// PollFailed is how often failed evals are collected; default 1s.
	PollFailed time.Duration
	// Clock; default time.Now.
	Clock func() time.Time
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Feed is the processor.
type Feed struct {
	cfg     Config
	blocked map[string]*events.Evaluation
	// capacityIndex is the index of the last capacity change seen: a
	// blocked eval computed on an older snapshot missed it and is unblocked
	// at once, so no wake-up is lost between a plan and its blocked eval.
	capacityIndex uint64
}

// New returns a Feed.
func New(cfg Config) (*Feed, error) {
	if cfg.Broker == nil || cfg.Pipeline == nil || cfg.Store == nil || cfg.Notifier == nil || cfg.Restore == nil {
		return nil, errors.New("evalfeed: Broker, Pipeline, Store, Notifier and Restore are required")
	}
	if cfg.FailedFollowUpDelay <= 0 {
		cfg.FailedFollowUpDelay = time.Minute
	}
	if cfg.PollFailed <= 0 {
		cfg.PollFailed = time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Feed{cfg: cfg}, nil
}

// Name implements supervisor.Processor.
func (f *Feed) Name() string { return "eval-feed" }

// Run implements supervisor.Processor.
func (f *Feed) Run(ctx context.Context) error {
	b := f.cfg.Broker
	b.SetEnabled(true)
	defer b.SetEnabled(false)
	next, err := f.restore()
	if err != nil {
		return err
	}
	poll := time.NewTicker(f.cfg.PollFailed)
	defer poll.Stop()
	for {
		applied, wake := f.cfg.Notifier.Applied()
		if next <= applied {
			unblock, err := f.consume(next, applied)
			if err != nil {
				return err
			}
			next = applied + 1
			if unblock {
				f.unblock(ctx)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-poll.C:
			f.failEvals(ctx)
		}
	}
}

// restore enqueues the pending evals and remembers the blocked ones, and
// returns the first index to follow from.
func (f *Feed) restore() (uint64, error) {
	snap := f.cfg.Store.Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	at, err := v.AppliedIndex()
	if err != nil {
		return 0, err
	}
	pending, blocked, err := f.cfg.Restore(v)
	if err != nil {
		return 0, fmt.Errorf("restore evals: %w", err)
	}
	now := f.cfg.Clock()
	for _, e := range pending {
		f.cfg.Broker.Enqueue(e, now)
	}
	f.blocked = map[string]*events.Evaluation{}
	for _, e := range blocked {
		f.blocked[e.ID] = e
	}
	f.cfg.Logger.Info("eval broker restored", "pending", len(pending), "blocked", len(blocked), "index", at)
	return at + 1, nil
}

// consume reads the archive from..to, enqueues pending evals, tracks
// blocked ones and reports whether capacity may have freed up.
func (f *Feed) consume(from, to uint64) (bool, error) {
	snap := f.cfg.Store.Snapshot()
	defer snap.Close()
	now := f.cfg.Clock()
	unblock := false
	err := archive.Scan(snap, from, to, func(index uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		ev.Index = index
		free, err := f.apply(ev, now)
		if free && ev.Type != "EvalsUpserted" {
			f.capacityIndex = index
		}
		unblock = unblock || free
		return err
	})
	return unblock, err
}

func (f *Feed) apply(ev *events.Event, now time.Time) (bool, error) {
	switch ev.Type {
	case "EvalsUpserted", "NodeRegistered", "NodeStatusUpdated", "NodeEligibilityUpdated", "NodeDrainUpdated",
		"AllocsClientUpdated", "AllocsDesiredUpdated":
	default:
		return false, nil
	}
	p, err := events.Decode(ev)
	if err != nil {
		return false, err
	}
	switch p := p.(type) {
	case *events.EvalsUpserted:
		free := false
		for i := range p.Evals {
			e := p.Evals[i]
			e.ModifyIndex = ev.Index
			switch e.Status {
			case events.EvalStatusPending:
				delete(f.blocked, e.ID)
				f.cfg.Broker.Enqueue(&e, now)
			case events.EvalStatusBlocked:
				f.blocked[e.ID] = &e
				if e.SnapshotIndex < f.capacityIndex {
					free = true
				}
			default:
				delete(f.blocked, e.ID)
			}
		}
		return free, nil
	case *events.NodeStatusUpdated:
		return p.Status == events.NodeStatusReady, nil
	case *events.NodeEligibilityUpdated:
		return p.Eligibility == events.NodeEligible, nil
	case *events.AllocsClientUpdated:
		for _, u := range p.Updates {
			switch u.ClientStatus {
			case events.AllocClientComplete, events.AllocClientFailed, events.AllocClientLost:
				return true, nil
			}
		}
		return false, nil
	case *events.AllocsDesiredUpdated:
		for _, u := range p.Updates {
			if u.DesiredStatus == events.AllocDesiredStop || u.DesiredStatus == events.AllocDesiredEvict {
				return true, nil
			}
		}
		return false, nil
	}
	return true, nil // a node registered or its drain changed
}

// unblock turns every blocked eval pending again.
func (f *Feed) unblock(ctx context.Context) {
	if len(f.blocked) == 0 {
		return
	}
	up := eval.Update{Expect: map[string]uint64{}}
	now := f.cfg.Clock().UnixNano()
	for id, e := range f.blocked {
		c := *e
		c.Status = events.EvalStatusPending
		c.StatusDescription = "unblocked by a capacity change"
		c.ModifyTime = now
		up.Evals = append(up.Evals, c)
		up.Expect[id] = e.ModifyIndex
	}
	sortEvals(up.Evals)
	if _, err := f.cfg.Pipeline.Run(ctx, "eval.unblock", commands.Request{Actor: "system:eval-feed"}, up); err != nil {
		f.cfg.Logger.Info("unblocking evals deferred", "err", err, "blocked", len(f.blocked))
		return
	}
	f.cfg.Logger.Info("blocked evals unblocked", "count", len(up.Evals))
}

// failEvals marks the evals that exceeded the delivery limit failed and
// creates a delayed follow-up for each.
func (f *Feed) failEvals(ctx context.Context) {
	for _, e := range f.cfg.Broker.DequeueFailed() {
		now := f.cfg.Clock()
		failed := *e
		failed.Status = events.EvalStatusFailed
		failed.StatusDescription = "evaluation reached its delivery limit"
		failed.ModifyTime = now.UnixNano()
		follow := events.Evaluation{
			ID: scheduler.DeriveID(e.ID, "failed-follow-up", 0), Namespace: e.Namespace, Priority: e.Priority,
			Type: e.Type, TriggeredBy: events.EvalTriggerFailedFollowUp, JobID: e.JobID, JobModifyIndex: e.JobModifyIndex,
			Status: events.EvalStatusPending, PreviousEval: e.ID, Wait: f.cfg.FailedFollowUpDelay,
			WaitUntil: now.Add(f.cfg.FailedFollowUpDelay).UnixNano(), CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
		}
		failed.NextEval = follow.ID
		up := eval.Update{Evals: []events.Evaluation{failed, follow}, Expect: map[string]uint64{e.ID: e.ModifyIndex}}
		if _, err := f.cfg.Pipeline.Run(ctx, "eval.fail", commands.Request{Actor: "system:eval-feed"}, up); err != nil {
			f.cfg.Logger.Warn("failing eval deferred", "eval_id", e.ID, "err", err)
			continue
		}
		f.cfg.Logger.Warn("eval failed after its delivery limit; follow-up created", "eval_id", e.ID, "follow_up", follow.ID)
	}
}

func sortEvals(evs []events.Evaluation) {
	sort.Slice(evs, func(i, j int) bool { return evs[i].ID < evs[j].ID })
}
