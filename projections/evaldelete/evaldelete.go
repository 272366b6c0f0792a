package evaldelete

import (
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/order"
)

// OpDeletable is the precondition operation "the eval in Key exists and
// may be deleted" (N6), carried once per eval by a delete by id.
const OpDeletable events.PreconditionOp = "eval-deletable"

// Limits of one page.
const (
	// DefaultPageSize is the page size a delete by filter uses unless told:
	// 25–40 µs an eval on an idle core of this machine (the walk's Get,
	// decode and filter, the safety check, the deletes, the history rows,
	// the commit; BenchmarkDeleteAll), so one apply of a page stays near
	// 10 ms (docs/gc.md has the figures).
	DefaultPageSize = 250
	// MaxPageSize bounds a requested page size.
	MaxPageSize = 10000
	// ScanFactor times the page size is the scan limit of a page.
	ScanFactor = 4
)

// ErrBadFilter wraps a filter that does not compile.
var ErrBadFilter = errors.New("ordo: bad eval filter")

func init() {
	projections.RegisterExpander("EvalsPageDeleted", expandPage)
	projections.RegisterCheck(OpDeletable, checkDeletable)
}

// Safety decides N6 for evals read from one view, remembering the jobs it
// looked up.
type Safety struct {
	v    projections.View
	jobs map[string]bool
}

// NewSafety returns a Safety reading v.
func NewSafety(v projections.View) *Safety { return &Safety{v: v, jobs: map[string]bool{}} }

// Safe reports whether e may be deleted: its job is gone, stopped or dead,
// or every allocation it placed is terminal (desired stop or evict, or
// complete, failed or lost on its node).
func (s *Safety) Safe(e *events.Evaluation) (bool, error) {
	done, err := s.jobDone(e.Namespace, e.JobID)
	if err != nil || done {
		return done, err
	}
	list, err := allocs.ByEval(s.v, e.ID)
	if err != nil {
		return false, fmt.Errorf("allocs of eval %s: %w", e.ID, err)
	}
	for _, a := range list {
		if !a.Terminal() {
			return false, nil
		}
	}
	return true, nil
}

func (s *Safety) jobDone(ns, id string) (bool, error) {
	key := ns + "\x00" + id
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

// Page is the outcome of Walk.
type Page struct {
	// IDs are the evals the page deletes, in creation order.
	IDs []string
	// Selected counts the evals the filter selected (deleted or skipped).
	Selected int
	// Skipped counts selected evals that were not safe to delete.
	Skipped int
	// Scanned counts the evals looked at.
	Scanned int
	// First is the creation key of the first selected eval, "" when none
	// was: where a page that starts at a selected eval starts.
	First string
	// Next is the creation key of the first eval past the page, "" at the
	// end of the table.
	Next string
}

// errStop ends a walk.
var errStop = errors.New("stop")

// Walk re-creates one page: it looks at the evals in creation order from
// the creation key from ("" for the oldest), keeps those f selects, and
// stops once pageSize were selected or scanLimit were looked at (0: no
// limit). With check set, selected evals that are not Safe are skipped;
// without, every selected eval is in IDs (a handler's estimate).
func Walk(v projections.View, f *Filter, from string, pageSize, scanLimit int, check bool) (Page, error) {
	var p Page
	if pageSize <= 0 {
		return p, fmt.Errorf("evaldelete: page size %d", pageSize)
	}
	safety := NewSafety(v)
	err := v.ScanFrom(evals.ByCreateTable, "", from, false, func(key string, _ projections.Row) error {
		if p.Selected >= pageSize || (scanLimit > 0 && p.Scanned >= scanLimit) {
			p.Next = key
			return errStop
		}
		p.Scanned++
		_, id, err := order.Split(key)
		if err != nil {
			return err
		}
		e, err := evals.Get(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		ok, err := Match(f, &e.Evaluation)
		if err != nil || !ok {
			return err
		}
		p.Selected++
		if p.First == "" {
			p.First = key
		}
		if check {
			safe, err := safety.Safe(&e.Evaluation)
			if err != nil {
				return err
			}
			if !safe {
				p.Skipped++
				return nil
			}
		}
		p.IDs = append(p.IDs, id)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return Page{}, err
	}
	return p, nil
}

// expandPage completes an EvalsPageDeleted at apply (N4): the page its
// filter, start, size and scan limit select in the state before the entry,
// safe evals only (N6). A filter that no longer compiles (it compiled when
// the command was decided) refuses the entry.
func expandPage(v projections.View, _ int64, pl events.Payload) (events.Payload, string, error) {
	p, ok := pl.(*events.EvalsPageDeleted)
	if !ok {
		return nil, "", fmt.Errorf("evaldelete: expander got a %T", pl)
	}
	f, err := Compile(p.Filter)
	if err != nil {
		return nil, err.Error(), nil
	}
	page, err := Walk(v, f, p.From, p.PageSize, p.ScanLimit, true)
	if errors.Is(err, ErrBadFilter) {
		return nil, err.Error(), nil
	} else if err != nil {
		return nil, "", err
	}
	out := *p
	out.IDs, out.Skipped, out.Next = page.IDs, page.Skipped, page.Next
	return &out, "", nil
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
		return "its job is live and it has allocations that are not terminal"
	}
	return ""
}
