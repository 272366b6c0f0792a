package rerun

import (
	"errors"
	"fmt"
	"os"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
)

// Rerun re-runs the scheduling decision of eval evalID: it rebuilds every
// projection from the archive in src up to the eval's snapshot index into
// a scratch store under dir (created and removed by Rerun), takes the eval
// as it was at that index — pending, the version the worker dequeued — and
// calls scheduler.Compute on that state. The plan it returns is what the
// worker's last attempt computed, if the scheduler is a pure function of
// (snapshot, eval); compare it with Recorded's with Diff.
//
// It returns ErrNoEval for an eval the archive never recorded and
// ErrNotDecided for one no worker completed.
func Rerun(src kv.Reader, evalID, dir string) (*scheduler.Plan, error) {
	rec, err := Recorded(src, evalID)
	if err != nil {
		return nil, err
	}
	return recompute(src, rec, dir)
}

// recompute re-runs rec's decision on a scratch store under dir.
func recompute(src kv.Reader, rec *Record, dir string) (*scheduler.Plan, error) {
	return recomputeWith(src, rec, dir, nil)
}

// recomputeWith is recompute calling inspect, when set, with the state at
// the snapshot index and the plan, before the scratch store is removed.
func recomputeWith(src kv.Reader, rec *Record, dir string, inspect func(projections.View, *scheduler.Plan) error) (*scheduler.Plan, error) {
	if !rec.Decided() {
		return nil, fmt.Errorf("rerun eval %s: %w", rec.EvalID, ErrNotDecided)
	}
	scratch, err := os.MkdirTemp(dir, "rerun-")
	if err != nil {
		return nil, fmt.Errorf("rerun eval %s: %w", rec.EvalID, err)
	}
	defer os.RemoveAll(scratch)
	dst, err := kv.Open(scratch, kv.DefaultConfig())
	if err != nil {
		return nil, fmt.Errorf("rerun eval %s: %w", rec.EvalID, err)
	}
	defer dst.Close()
	if _, err := rebuild.Rebuild(src, dst, all.Projections(), rec.SnapshotIndex, nil); err != nil {
		return nil, fmt.Errorf("rerun eval %s: rebuild to %d: %w", rec.EvalID, rec.SnapshotIndex, err)
	}
	snap := dst.Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	row, err := evals.Get(v, rec.EvalID)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, fmt.Errorf("rerun eval %s: not in the state at its snapshot index %d", rec.EvalID, rec.SnapshotIndex)
	} else if err != nil {
		return nil, fmt.Errorf("rerun eval %s: %w", rec.EvalID, err)
	}
	ev := row.Evaluation
	if ev.Status != events.EvalStatusPending {
		return nil, fmt.Errorf("rerun eval %s: status %q at its snapshot index %d, not pending", rec.EvalID, ev.Status, rec.SnapshotIndex)
	}
	st, err := schedstate.New(v)
	if err != nil {
		return nil, fmt.Errorf("rerun eval %s: %w", rec.EvalID, err)
	}
	if st.Index() > rec.SnapshotIndex {
		return nil, fmt.Errorf("rerun eval %s: rebuilt state at %d, past the snapshot index %d", rec.EvalID, st.Index(), rec.SnapshotIndex)
	}
	// The rebuilt applied index is the last entry with events at or before
	// the snapshot index; entries after it applied nothing (raft's own, or
	// rejected), so the state is the one the worker read at SnapshotIndex.
	// With the scores of every node each placement weighed: they explain
	// the choice, and are no part of the plan compared.
	plan, err := scheduler.Compute(atIndex{st, rec.SnapshotIndex}, &ev, scheduler.WithScores())
	if err == nil {
		err = st.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("rerun eval %s: compute: %w", rec.EvalID, err)
	}
	if inspect != nil {
		if err := inspect(v, plan); err != nil {
			return nil, fmt.Errorf("rerun eval %s: %w", rec.EvalID, err)
		}
	}
	return plan, nil
}

// atIndex is a State that reports the snapshot index the worker recorded.
type atIndex struct {
	*schedstate.State
	index uint64
}

func (s atIndex) Index() uint64 { return s.index }
