package evaldelete

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/jobs"
)

// OpDeletable is the precondition operation "the eval in Key exists and
// may be deleted" (N6), carried once per eval by a delete by id.
const OpDeletable events.PreconditionOp = "eval-deletable"

// allocScanFactor times the evals of a page bounds the allocs_by_eval
// rows SafeAll reads in one range scan over the page's eval ids; a range
// holding more (other evals' allocations) is read eval by eval instead.
const allocScanFactor = 4

// Safety decides N6 for evals read from one view, remembering the jobs it
// looked up.
type Safety struct {
	v    projections.View
	jobs map[string]bool
}

// NewSafety returns a Safety reading v.
func NewSafety(v projections.View) *Safety { return &Safety{v: v, jobs: map[string]bool{}} }

// Safe reports whether e may be deleted (N6): its job is terminal (gone,
// stopped or dead) and so is every allocation it placed (desired stop or
// evict, or complete, failed or lost on its node). An eval of a live job
// is kept even when its allocations finished, and an eval of a stopped
// job is kept while one of its allocations still runs.
func (s *Safety) Safe(e *events.Evaluation) (bool, error) {
	ok, err := s.SafeAll([]*events.Evaluation{e})
	if err != nil {
		return false, err
	}
	return ok[0], nil
}

// SafeAll decides Safe for each of list. The allocations of the evals
// whose job is terminal are found by one range scan of the allocs_by_eval
// index between the smallest and largest of their ids (close together
// when ids are minted in time order), bounded by allocScanFactor rows per
// eval; past the bound, as with random ids, eval by eval.
func (s *Safety) SafeAll(list []*events.Evaluation) ([]bool, error) {
	out := make([]bool, len(list))
	if err := s.readJobs(list); err != nil {
		return nil, err
	}
	var check []int // indexes into list of evals whose job is terminal
	lo, hi := "", ""
	for i, e := range list {
		done, err := s.jobDone(e.Namespace, e.JobID)
		if err != nil {
			return nil, err
		}
		if !done {
			continue
		}
		check = append(check, i)
		if lo == "" || e.ID < lo {
			lo = e.ID
		}
		if e.ID > hi {
			hi = e.ID
		}
	}
	if len(check) == 0 {
		return out, nil
	}
	byEval, err := s.allocIDs(lo, hi, len(check)*allocScanFactor)
	if err != nil {
		return nil, err
	}
	for _, i := range check {
		e := list[i]
		ids, ok := byEval[e.ID]
		if byEval == nil {
			if ids, err = s.evalAllocIDs(e.ID); err != nil {
				return nil, err
			}
			ok = len(ids) > 0
		}
		safe := true
		if ok {
			if safe, err = s.allTerminal(ids); err != nil {
				return nil, err
			}
		}
		out[i] = safe
	}
	return out, nil
}

// allocIDs reads the allocs_by_eval rows of the evals with ids in
// [lo, hi]: alloc ids by eval id. It returns nil (not an empty map) when
// there are more than limit rows.
func (s *Safety) allocIDs(lo, hi string, limit int) (map[string][]string, error) {
	out := map[string][]string{}
	n := 0
	// Keys are "<eval>\x00<alloc>": every key of hi sorts before hi+"\x01".
	err := s.v.ScanFrom(allocs.ByEvalTable, "", allocs.EvalKey(lo), false, func(key string, _ projections.Row) error {
		if key >= hi+"\x01" {
			return errStop
		}
		if n++; n > limit {
			out = nil
			return errStop
		}
		evalID, allocID, ok := cutZero(key)
		if !ok {
			return fmt.Errorf("evaldelete: malformed %s key %q", allocs.ByEvalTable, key)
		}
		out[evalID] = append(out[evalID], allocID)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("allocs of evals %s..%s: %w", lo, hi, err)
	}
	return out, nil
}

// evalAllocIDs returns the ids of the allocations eval id placed.
func (s *Safety) evalAllocIDs(id string) ([]string, error) {
	var out []string
	prefix := allocs.EvalKey(id)
	err := s.v.Scan(allocs.ByEvalTable, prefix, false, func(key string, _ projections.Row) error {
		out = append(out, key[len(prefix):])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("allocs of eval %s: %w", id, err)
	}
	return out, nil
}

// allTerminal reports whether every allocation of ids that exists is
// terminal.
func (s *Safety) allTerminal(ids []string) (bool, error) {
	for _, id := range ids {
		a, err := allocs.Get(s.v, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return false, fmt.Errorf("alloc %s: %w", id, err)
		}
		if !a.Terminal() {
			return false, nil
		}
	}
	return true, nil
}

// cutZero splits key at its first zero byte.
func cutZero(key string) (before, after string, ok bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return key[:i], key[i+1:], true
		}
	}
	return "", "", false
}

// readJobs learns which of the jobs of list that Safety does not know yet
// exist, with one range scan of the jobs table between the smallest and
// largest of their keys, bounded by allocScanFactor rows per job (past
// the bound, jobDone reads them one by one): an absent job (the common
// case of a bulk delete) then costs no point read. Jobs that exist are
// read by jobDone.
func (s *Safety) readJobs(list []*events.Evaluation) error {
	var keys []string
	for _, e := range list {
		if _, ok := s.jobs[jobs.Key(e.Namespace, e.JobID)]; !ok {
			keys = append(keys, jobs.Key(e.Namespace, e.JobID))
		}
	}
	if len(keys) < 2 {
		return nil
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	lo, hi := keys[0], keys[len(keys)-1]
	exists := map[string]bool{}
	n, limit := 0, len(keys)*allocScanFactor
	err := s.v.ScanFrom(jobs.Table, "", lo, false, func(key string, _ projections.Row) error {
		if key > hi {
			return errStop
		}
		if n++; n > limit {
			exists = nil
			return errStop
		}
		exists[key] = true
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return fmt.Errorf("jobs %q..%q: %w", lo, hi, err)
	}
	if exists == nil {
		return nil // too many jobs in between: jobDone reads each
	}
	for _, k := range keys {
		if !exists[k] {
			s.jobs[k] = true // gone
		}
	}
	return nil
}

// jobDone reports whether job ns/id is terminal: gone, stopped or dead.
func (s *Safety) jobDone(ns, id string) (bool, error) {
	key := jobs.Key(ns, id)
	if done, ok := s.jobs[key]; ok {
		return done, nil
	}
	j, err := jobs.Get(s.v, ns, id)
	var done bool
	switch {
	case errors.Is(err, projections.ErrNotFound):
		done = true
	case err != nil:
		return false, fmt.Errorf("job %s/%s: %w", ns, id, err)
	default:
		done = j.Stop || j.Status == jobs.StatusDead
	}
	s.jobs[key] = done
	return done, nil
}

// checkDeletable decides OpDeletable: the eval exists and is Safe.
func checkDeletable(v projections.View, p events.Precondition) string {
	e, err := evals.Get(v, p.Key)
	if errors.Is(err, projections.ErrNotFound) {
		return "does not exist"
	} else if err != nil {
		return err.Error()
	}
	safe, err := NewSafety(v).Safe(&e.Evaluation)
	switch {
	case err != nil:
		return err.Error()
	case !safe:
		return "its job is not terminal (gone, stopped or dead) or it has allocations that are not terminal"
	}
	return ""
}
