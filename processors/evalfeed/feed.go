package evalfeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/eval"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/broker"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/processors/follow"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/storage/archive"
)

// Submitter runs commands; *commands.Pipeline implements it.
type Submitter interface {
	Run(ctx context.Context, name string, req commands.Request, c commands.Command) (commands.Outcome, error)
}

var _ Submitter = (*commands.Pipeline)(nil)

// Config configures a Feed.
type Config struct {
	// Broker, Pipeline, Store and Notifier are required.
	Broker   *broker.Broker
	Pipeline Submitter
	Store    follow.Snapshotter
	Notifier *projections.Notifier
	// Restore lists the pending and blocked evals in a view; required.
	Restore func(v projections.View) (pending, blocked []*events.Evaluation, err error)
	// FailedFollowUpDelay delays the follow-up of a failed eval; default 1m.
	FailedFollowUpDelay time.Duration
	// PollFailed is how often failed evals are collected; default 1s.
	PollFailed time.Duration
	// Clock gives the time evals are released and failed at, and paces
	// the collection of failed evals; default clock.System.
	Clock clock.Clock
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Feed is the processor.
type Feed struct {
	cfg     Config
	blocked map[string]*events.Evaluation
	// changes holds, per computed class, the index of the last capacity
	// change seen on its nodes since Run started. A blocked eval is
	// unblocked when a class it may use (unblocks) changed after the
	// snapshot it was computed on — so an eval committed after the change
	// that frees its capacity is unblocked at once, and no wake-up is lost
	// between a plan and its blocked eval.
	changes map[string]uint64
	// check says the blocked evals need checking against changes: a
	// capacity change or a new blocked eval came, or an unblock failed.
	check bool
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{FailedFollowUpDelay: time.Minute, PollFailed: time.Second, Clock: clock.System{}, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Broker == nil || c.Pipeline == nil || c.Store == nil || c.Notifier == nil || c.Restore == nil:
		return errors.New("evalfeed: Broker, Pipeline, Store, Notifier and Restore are required")
	case c.FailedFollowUpDelay < 0 || c.PollFailed < 0:
		return errors.New("evalfeed: FailedFollowUpDelay and PollFailed must not be negative")
	}
	return nil
}

// New returns a Feed; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Feed, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
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
	if _, err := f.followPause(); err != nil { // pause.go: a leader starting paused stays so
		return err
	}
	poll := f.cfg.Clock.NewTimer(f.cfg.PollFailed)
	defer func() { poll.Stop() }()
	for {
		applied, wake := f.cfg.Notifier.Applied()
		if next <= applied {
			if err := f.consume(next, applied); err != nil {
				return err
			}
			next = applied + 1
			if at, err := f.followPause(); err != nil { // pause.go: the scheduler configuration's PauseEvalBroker
				return err
			} else if at > 0 {
				next = at + 1
			}
			if f.check {
				f.unblock(ctx)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-poll.C():
			poll = f.cfg.Clock.NewTimer(f.cfg.PollFailed)
			f.failEvals(ctx)
			if f.check {
				f.unblock(ctx) // one that failed is tried again
			}
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
	now := f.cfg.Clock.Now()
	for _, e := range pending {
		f.cfg.Broker.Enqueue(e, now)
	}
	f.blocked = map[string]*events.Evaluation{}
	f.changes, f.check = map[string]uint64{}, false
	for _, e := range blocked {
		f.blocked[e.ID] = e
	}
	f.cfg.Logger.Info("eval broker restored", "pending", len(pending), "blocked", len(blocked), "index", at)
	return at + 1, nil
}

// consume reads the archive from..to: it enqueues pending evals, tracks
// blocked ones and records the computed classes whose capacity may have
// freed up.
func (f *Feed) consume(from, to uint64) error {
	snap := f.cfg.Store.Snapshot()
	defer snap.Close()
	now := f.cfg.Clock.Now()
	cl := &classes{v: projections.NewView(snap), byNode: map[string]string{}}
	return archive.Scan(snap, from, to, func(index uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		ev.Index = index
		changed, err := f.apply(ev, now, cl)
		for _, c := range changed {
			f.changes[c] = index
			f.check = true
		}
		return err
	})
}

// apply handles one event and returns the computed classes of the nodes
// it may have freed capacity on: a node registered, ready, eligible again
// (or with its drain stopped and marked eligible), or an allocation on it
// stopped or finished.
func (f *Feed) apply(ev *events.Event, now time.Time, cl *classes) ([]string, error) {
	switch ev.Type {
	case "EvalsUpserted", "EvalsDeleted", "EvalsPageDeleted", "NodeRegistered", "NodeStatusUpdated",
		"NodeEligibilityUpdated", "NodeDrainUpdated", "AllocsClientUpdated", "AllocsDesiredUpdated",
		"CSIVolumeClaimsUpdated":
	default:
		return nil, nil
	}
	p, err := events.Decode(ev)
	if err != nil {
		return nil, err
	}
	switch p := p.(type) {
	case *events.EvalsUpserted:
		for i := range p.Evals {
			e := p.Evals[i]
			e.ModifyIndex = ev.Index
			e.JobModifyIndex = evals.CommittedJobModifyIndex(&e, ev.Index)
			switch e.Status {
			case events.EvalStatusPending:
				delete(f.blocked, e.ID)
				f.cfg.Broker.Enqueue(&e, now)
			case events.EvalStatusBlocked:
				f.blocked[e.ID] = &e
				f.check = true
			default:
				delete(f.blocked, e.ID)
			}
		}
		return nil, nil
	case *events.EvalsDeleted:
		f.forget(p.IDs)
		return nil, nil
	case *events.EvalsPageDeleted:
		f.forget(p.IDs)
		return nil, nil
	case *events.NodeRegistered:
		n := &p.Node
		return []string{events.ComputedClass(n.Datacenter, n.NodeClass, n.NodePool, n.Attributes, n.Meta, n.Drivers, n.HostVolumes)}, nil
	case *events.NodeStatusUpdated:
		if p.Status != events.NodeStatusReady {
			return nil, nil
		}
		return cl.ofNode(p.ID)
	case *events.NodeEligibilityUpdated:
		if p.Eligibility != events.NodeEligible {
			return nil, nil
		}
		return cl.ofNode(p.ID)
	case *events.NodeDrainUpdated:
		if p.DrainStrategy != nil || !p.MarkEligible {
			return nil, nil
		}
		return cl.ofNode(p.ID)
	case *events.AllocsClientUpdated:
		for _, u := range p.Updates {
			switch u.ClientStatus {
			case events.AllocClientComplete, events.AllocClientFailed, events.AllocClientLost:
				return cl.ofNode(p.NodeID)
			}
		}
	case *events.CSIVolumeClaimsUpdated:
		return freedClaims(p, cl)
	case *events.AllocsDesiredUpdated:
		var out []string
		for _, u := range p.Updates {
			if u.DesiredStatus != events.AllocDesiredStop && u.DesiredStatus != events.AllocDesiredEvict {
				continue
			}
			c, err := cl.ofAlloc(u.ID)
			if err != nil {
				return nil, err
			}
			out = append(out, c...)
		}
		return out, nil
	}
	return nil, nil
}

// forget drops deleted evals (an eval delete or garbage collection) from
// the broker's queues and from the blocked evals, so no worker is handed an
// eval that no longer exists; one a worker already holds is refused at plan
// apply (commands/plan.Commit requires the eval to exist).
func (f *Feed) forget(ids []string) {
	for _, id := range ids {
		delete(f.blocked, id)
	}
	if n := f.cfg.Broker.Remove(ids); n > 0 {
		f.cfg.Logger.Debug("deleted evals dropped from the broker", "dropped", n, "deleted", len(ids))
	}
}

// classes resolves nodes' computed classes from one snapshot, caching
// them per node. A node (or allocation) no longer stored has none: a
// change on a node that is gone frees nothing.
type classes struct {
	v      projections.View
	byNode map[string]string
}

func (c *classes) ofNode(id string) ([]string, error) {
	if cc, ok := c.byNode[id]; ok {
		return []string{cc}, nil
	}
	n, err := nodes.Get(c.v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("evalfeed: node %s: %w", id, err)
	}
	cc := events.ComputedClass(n.Datacenter, n.NodeClass, n.NodePool, n.Attributes, n.Meta, n.Drivers, n.HostVolumes)
	c.byNode[id] = cc
	return []string{cc}, nil
}

func (c *classes) ofAlloc(id string) ([]string, error) {
	a, err := allocs.Get(c.v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("evalfeed: allocation %s: %w", id, err)
	}
	return c.ofNode(a.NodeID)
}

// unblock turns pending again every blocked eval that missed a capacity
// change it may use (missed); the others stay blocked.
func (f *Feed) unblock(ctx context.Context) {
	up := eval.Update{Expect: map[string]uint64{}}
	now := f.cfg.Clock.Now().UnixNano()
	for id, e := range f.blocked {
		if !missed(e, f.changes) {
			continue
		}
		c := *e
		c.Status = events.EvalStatusPending
		c.StatusDescription = "unblocked by a capacity change"
		c.ModifyTime = now
		up.Evals = append(up.Evals, c)
		up.Expect[id] = e.ModifyIndex
	}
	if len(up.Evals) == 0 {
		f.check = false
		return
	}
	sortEvals(up.Evals)
	if _, err := f.cfg.Pipeline.Run(ctx, "eval.unblock", commands.Request{Actor: "system:eval-feed"}, up); err != nil {
		f.cfg.Logger.Info("unblocking evals deferred", "err", err, "unblocking", len(up.Evals), "blocked", len(f.blocked))
		return
	}
	f.check = false
	f.cfg.Logger.Info("blocked evals unblocked", "count", len(up.Evals), "still_blocked", len(f.blocked)-len(up.Evals))
}

// failEvals marks the evals that exceeded the delivery limit failed and
// creates a delayed follow-up for each.
func (f *Feed) failEvals(ctx context.Context) {
	for _, e := range f.cfg.Broker.DequeueFailed() {
		now := f.cfg.Clock.Now()
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
