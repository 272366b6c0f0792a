package rerun

import (
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// ErrNoEval is returned for an eval id the archive never recorded.
var ErrNoEval = errors.New("ordo: rerun: no such evaluation in the archive")

// ErrNotDecided is returned by Rerun for an eval no worker completed: it
// has no snapshot index to re-run it on (still pending or blocked, failed
// by the broker, or a worker gave up after plans the applier refused).
var ErrNotDecided = errors.New("ordo: rerun: evaluation has no completed scheduling decision")

// Commit is what one plan commit recorded for an evaluation: the events of
// one entry that carry its id (commands/plan.Commit).
type Commit struct {
	// Index is the entry's raft index.
	Index uint64
	// Placements are the new allocations (AllocsPlaced).
	Placements []events.Allocation
	// Updates are the stops and in-place updates, in the order committed:
	// the plan applier commits the plan's stops, then its updates, as one
	// AllocsDesiredUpdated.
	Updates []events.AllocDesiredUpdate
	// Deployment is the deployment the commit created, nil if none.
	Deployment *events.Deployment
	// Evals are the evals the commit created for the eval, in order: its
	// follow-ups, and in the completing commit its blocked eval. The
	// eval's own update is Record.Completed.
	Evals []events.Evaluation
}

// Record is a scheduling decision as the log recorded it.
type Record struct {
	EvalID string
	// Eval is the version of the eval the worker scheduled: the last one
	// the log holds at or before SnapshotIndex (or the last one at all for
	// an eval never completed), with its CreateIndex and ModifyIndex.
	Eval events.Evaluation
	// Completed is the worker's update completing the eval (status
	// complete, the snapshot index, queued counts, failures and links);
	// nil when no worker completed it.
	Completed *events.Evaluation
	// SnapshotIndex is the index of the state the completing plan was
	// computed on (Completed.SnapshotIndex); 0 when not completed.
	SnapshotIndex uint64
	// Final is the commit that completed the eval: the whole plan of the
	// worker's last attempt (the applier commits the eval's update only
	// with a plan that fits whole). Nil when not completed.
	Final *Commit
	// Earlier are the commits of the eval's plans before Final. A worker
	// plans again only when the plan applier committed part of a plan and
	// refused the rest (nodes that no longer fit, processors/plan),
	// so each is an attempt refused in part. What the applier refused is
	// not in the log.
	Earlier []Commit
	// Trigger is what the entry that created the eval changed with it, nil
	// when it only created the eval: the node drainer's migrate marks
	// (node.MarkMigrate) or an operator's stop (alloc.Stop). It caused the
	// eval; it is no attempt of its plan.
	Trigger *Commit
}

// Decided reports whether a worker completed the eval, so it can be re-run.
func (r *Record) Decided() bool { return r.Completed != nil && r.SnapshotIndex > 0 }

// Plan returns the completing commit as the scheduler.Plan that produced
// it, or nil when the eval was not completed. Plan.Complete is not
// recorded in the log and is always false.
func (r *Record) Plan() *scheduler.Plan {
	if !r.Decided() {
		return nil
	}
	c := r.Completed
	p := &scheduler.Plan{EvalID: r.EvalID, Namespace: r.Eval.Namespace, JobID: r.Eval.JobID,
		SnapshotIndex: r.SnapshotIndex, Placements: r.Final.Placements, Deployment: r.Final.Deployment,
		FailedTGAllocs: c.FailedTGAllocs, QueuedAllocations: c.QueuedAllocations}
	for _, u := range r.Final.Updates {
		if u.DesiredStatus == events.AllocDesiredStop || u.DesiredStatus == events.AllocDesiredEvict {
			p.Stops = append(p.Stops, u)
		} else {
			p.Updates = append(p.Updates, u)
		}
	}
	for _, e := range r.Final.Evals {
		if e.ID == c.BlockedEval {
			p.CreateBlockedEval = true
			p.ClassEligibility, p.EscapedComputedClass = e.ClassEligibility, e.EscapedComputedClass
			continue
		}
		p.FollowUps = append(p.FollowUps, e)
	}
	return p
}

// Recorded reads the archive in src and returns what the log recorded of
// eval evalID's scheduling: the version it was scheduled at, the commit
// that completed it and any earlier partial commits. It reads the archive
// from the start until the eval's completing update, so it works on any
// store holding an archive (a live store's snapshot, a copy).
//
// A commit of the eval is an entry, after the eval was created, with an
// AllocsPlaced or AllocsDesiredUpdated carrying its id, with its
// completing update, or creating evals whose PreviousEval is the eval
// while not updating the eval itself (a partial commit of follow-ups
// only); the DeploymentUpserted events of such an entry are the plan's.
func Recorded(src kv.Reader, evalID string) (*Record, error) {
	s := &scanner{rec: &Record{EvalID: evalID}, seenPrev: map[string]bool{}}
	var entry []*events.Event
	var index uint64
	err := archive.Scan(src, 1, 0, func(idx uint64, seq uint32, data []byte) error {
		if idx != index && len(entry) > 0 {
			if err := s.entry(index, entry); err != nil {
				return err
			}
			entry = entry[:0]
			if s.done {
				return kv.ErrStop
			}
		}
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", idx, seq, err)
		}
		index = idx
		entry = append(entry, ev)
		return nil
	})
	if err != nil && !errors.Is(err, kv.ErrStop) {
		return nil, fmt.Errorf("recorded eval %s: %w", evalID, err)
	}
	if !s.done && len(entry) > 0 {
		if err := s.entry(index, entry); err != nil {
			return nil, fmt.Errorf("recorded eval %s: %w", evalID, err)
		}
	}
	if len(s.versions) == 0 {
		return nil, fmt.Errorf("recorded eval %s: %w", evalID, ErrNoEval)
	}
	rec := s.rec
	// The version scheduled: the last one at or before the snapshot.
	v := s.versions[len(s.versions)-1]
	if rec.Decided() {
		for i := len(s.versions) - 1; i >= 0; i-- {
			if s.versions[i].index <= rec.SnapshotIndex {
				v = s.versions[i]
				break
			}
		}
	}
	rec.Eval = v.eval
	rec.Eval.CreateIndex, rec.Eval.ModifyIndex = s.versions[0].index, v.index
	return rec, nil
}

type version struct {
	index uint64
	eval  events.Evaluation
}

// scanner follows one eval through the archive, one entry at a time.
type scanner struct {
	rec      *Record
	versions []version // the eval's own updates before it completed
	// seenPrev holds evals already seen pointing back at the eval: an
	// entry that only updates them (a follow-up's own completion keeps
	// its PreviousEval) is not a commit of this eval's plan.
	seenPrev map[string]bool
	done     bool
}

// entry looks at one entry's events.
func (s *scanner) entry(index uint64, evs []*events.Event) error {
	id := s.rec.EvalID
	c := Commit{Index: index}
	var deps []*events.Event
	var self *events.Evaluation
	plan := false
	fresh := false // the entry creates an eval linked to this one
	for _, ev := range evs {
		switch ev.Type {
		case "AllocsPlaced", "AllocsDesiredUpdated":
			if ev.Key(events.KindEval) != id {
				continue
			}
		case "EvalsUpserted":
		case "DeploymentUpserted":
			deps = append(deps, ev) // decoded if the entry is a commit
			continue
		default:
			continue
		}
		p, err := events.Decode(ev)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", ev.Index, ev.Seq, err)
		}
		switch p := p.(type) {
		case *events.AllocsPlaced:
			if p.EvalID == id {
				c.Placements = append(c.Placements, p.Allocs...)
				plan = true
			}
		case *events.AllocsDesiredUpdated:
			if p.EvalID == id {
				c.Updates = append(c.Updates, p.Updates...)
				plan = true
			}
		case *events.EvalsUpserted:
			for i := range p.Evals {
				e := p.Evals[i]
				switch {
				case e.ID == id:
					self = &e
				case e.PreviousEval == id:
					fresh = fresh || !s.seenPrev[e.ID]
					s.seenPrev[e.ID] = true
					c.Evals = append(c.Evals, e)
				}
			}
		}
	}
	creating := self != nil && len(s.versions) == 0 && self.Status != events.EvalStatusComplete
	if self != nil {
		s.versions = append(s.versions, version{index: index, eval: *self})
	}
	if len(s.versions) == 0 {
		return nil // before the eval exists
	}
	if creating {
		// The command that created the eval committed these allocation
		// changes with it (a migrate mark, a stop): they triggered the
		// eval; no worker had planned yet.
		if plan {
			s.rec.Trigger = &c
		}
		s.done = self.Terminal()
		return nil
	}
	completing := self != nil && self.Status == events.EvalStatusComplete
	switch {
	case completing:
	case self != nil && !plan:
		// The eval itself changed (created, unblocked, failed): the evals
		// this entry links to it are not a plan's. A failed or canceled
		// eval is never scheduled again.
		s.done = self.Terminal()
		return nil
	case !plan && !fresh:
		// Only updates of evals created earlier (a follow-up scheduled
		// while this eval was still planning).
		return nil
	}
	for _, ev := range deps {
		p, err := events.Decode(ev)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", ev.Index, ev.Seq, err)
		}
		c.Deployment = &p.(*events.DeploymentUpserted).Deployment
	}
	if !completing {
		s.rec.Earlier = append(s.rec.Earlier, c)
		return nil
	}
	s.rec.Completed, s.rec.SnapshotIndex, s.rec.Final = self, self.SnapshotIndex, &c
	s.done = true
	return nil
}
