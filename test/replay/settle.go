// Package replay holds WaitSettled and WaitQuiet, with which end-to-end
// tests wait for the scheduler (and the deployment watcher) to have
// nothing left to do. The end-to-end replay test that gave the package its
// name — every scheduling decision a real agent recorded is re-run against
// its snapshot and must reproduce the committed plan (history/rerun) — is
// in test/e2e (replay_test.go), which shares one test binary.
package replay

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// WaitSettled waits until the scheduler has nothing left to do in store
// (see Settler) and returns the applied index it settled at; it fails t
// after timeout, naming what was still outstanding. It wakes on every
// apply (n), never by polling.
func WaitSettled(t testing.TB, store *kv.Store, n *projections.Notifier, timeout time.Duration) uint64 {
	t.Helper()
	var s Settler
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		_, wake := n.Applied()
		snap := store.Snapshot()
		at, why, err := s.Check(snap)
		snap.Close()
		if err != nil {
			t.Fatalf("wait for the scheduler to settle: %v", err)
		}
		if why == "" {
			return at
		}
		select {
		case <-wake:
		case <-deadline.C:
			t.Fatalf("scheduler not settled after %v: %s", timeout, why)
		}
	}
}

// Settler tells whether the scheduler is done with a state: no eval is
// pending and due, and no blocked eval was computed before the last
// capacity change (the eval feed unblocks those at once, as it does in
// processors/evalfeed, so they are still to be scheduled). It reads the
// archive incrementally: keep one Settler per store.
type Settler struct {
	next     uint64
	capacity uint64 // index of the last capacity change
}

// Check returns the applied index of r and "" when the scheduler is done
// with it, or what is outstanding.
func (s *Settler) Check(r kv.Reader) (uint64, string, error) {
	v := projections.NewView(r)
	at, err := v.AppliedIndex()
	if err != nil {
		return 0, "", err
	}
	if s.next == 0 {
		s.next = 1
	}
	err = archive.Scan(r, s.next, 0, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		free, err := freesCapacity(ev)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		if free {
			s.capacity = index
		}
		s.next = index + 1
		return nil
	})
	if err != nil {
		return 0, "", err
	}
	now := time.Now().UnixNano()
	var why string
	errDone := errors.New("done")
	err = evals.Scan(v, evals.Query{}, func(e *evals.Eval) error {
		switch {
		case e.Status == events.EvalStatusPending && e.WaitUntil <= now:
			why = fmt.Sprintf("eval %s (%s, job %s) is pending", e.ID, e.TriggeredBy, e.JobID)
		case e.Status == events.EvalStatusBlocked && e.SnapshotIndex < s.capacity:
			why = fmt.Sprintf("blocked eval %s (job %s) was computed at %d, before the capacity change at %d",
				e.ID, e.JobID, e.SnapshotIndex, s.capacity)
		default:
			return nil
		}
		return errDone
	})
	if err != nil && !errors.Is(err, errDone) {
		return 0, "", err
	}
	return at, why, nil
}

// freesCapacity mirrors the eval feed: which events may let a blocked
// eval place.
func freesCapacity(ev *events.Event) (bool, error) {
	switch ev.Type {
	case "NodeRegistered", "NodeDrainUpdated":
		return true, nil
	case "NodeStatusUpdated", "NodeEligibilityUpdated", "AllocsClientUpdated", "AllocsDesiredUpdated":
	default:
		return false, nil
	}
	p, err := events.Decode(ev)
	if err != nil {
		return false, err
	}
	switch p := p.(type) {
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
	case *events.AllocsDesiredUpdated:
		for _, u := range p.Updates {
			if u.DesiredStatus == events.AllocDesiredStop || u.DesiredStatus == events.AllocDesiredEvict {
				return true, nil
			}
		}
	}
	return false, nil
}
