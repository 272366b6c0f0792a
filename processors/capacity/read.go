package capacity

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/projections/nodes"
)

// view is what one pass read: per mapped pool, its demand, requests and
// instances.
type view struct {
	demand    map[string]*Demand
	requests  map[string][]Request
	instances map[string][]Instance
}

// read builds the pass's view from the tracker and the projections at v.
func (t *tracker) read(v projections.View, pools map[string]Pool) (*view, error) {
	out := &view{demand: map[string]*Demand{}, requests: map[string][]Request{}, instances: map[string][]Instance{}}
	for name := range pools {
		out.demand[name] = &Demand{}
	}
	if err := t.readDemand(v, out.demand); err != nil {
		return nil, err
	}
	mine := map[string]bool{}
	for id, pool := range t.requests {
		if _, ok := pools[pool]; !ok {
			continue
		}
		r, err := launcher.GetRequest(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			delete(t.requests, id)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("capacity: read request %s: %w", id, err)
		}
		mine[id] = true
		out.requests[pool] = append(out.requests[pool], Request{ID: r.ID, State: r.State, CreateIndex: r.CreateIndex})
	}
	for id, pool := range t.instances {
		in, err := launcher.GetInstance(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			delete(t.instances, id)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("capacity: read instance %s: %w", id, err)
		}
		if _, ok := pools[pool]; !ok || (in.State != events.InstanceBuilding && in.State != events.InstanceInUse && in.State != events.InstanceReady) {
			continue
		}
		if in.RequestID != "" && !mine[in.RequestID] {
			continue
		}
		inst := Instance{ID: id, RequestID: in.RequestID}
		if nodeID := t.nodeOf[id]; nodeID != "" {
			n, err := readNode(v, nodeID)
			if err != nil {
				return nil, err
			}
			inst.Node = n
		}
		out.instances[pool] = append(out.instances[pool], inst)
	}
	for pool := range out.requests {
		slices.SortFunc(out.requests[pool], func(a, b Request) int { return cmp.Compare(a.CreateIndex, b.CreateIndex) })
	}
	for pool := range out.instances {
		slices.SortFunc(out.instances[pool], func(a, b Instance) int { return strings.Compare(a.ID, b.ID) })
	}
	return out, nil
}

// readNode returns the node as Decide sees it, nil when it is gone.
func readNode(v projections.View, id string) (*Node, error) {
	n, err := nodes.Get(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("capacity: read node %s: %w", id, err)
	}
	as, err := allocs.ByNode(v, id)
	if err != nil {
		return nil, fmt.Errorf("capacity: read allocs of node %s: %w", id, err)
	}
	// A node that just registered is initializing until its first
	// heartbeat: usable soon, so supply.
	up := n.Status == events.NodeStatusReady || n.Status == events.NodeStatusInitializing
	out := &Node{ID: n.ID, ChangeIndex: n.ModifyIndex, Usable: up && n.SchedulingEligibility == events.NodeEligible && !n.Drain,
		Draining: n.Drain || n.SchedulingEligibility == events.NodeIneligible, Initializing: n.Status == events.NodeStatusInitializing}
	for _, a := range as {
		if !a.Terminal() {
			out.Allocs++
		}
	}
	return out, nil
}

// readDemand adds up, per mapped pool, the placements the blocked evals
// of live jobs failed for lack of capacity, and marks pools with a
// pending eval as settling.
func (t *tracker) readDemand(v projections.View, demand map[string]*Demand) error {
	ids := make([]string, 0, len(t.evals))
	for id := range t.evals {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		e := t.evals[id]
		job, err := jobs.Get(v, e.Namespace, e.JobID)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return fmt.Errorf("capacity: read job %s of eval %s: %w", e.JobID, e.ID, err)
		}
		pool := job.NodePool
		if pool == "" {
			pool = "default"
		}
		d, ok := demand[pool]
		if !ok || job.Stop {
			continue
		}
		if e.Status == events.EvalStatusPending {
			d.Settling = true
			continue
		}
		n, err := failedPlacements(v, e)
		if err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		d.Placements += n
		d.Evals = append(d.Evals, e.ID)
		if d.SeenIndex == 0 || e.SnapshotIndex < d.SeenIndex {
			d.SeenIndex = e.SnapshotIndex
		}
	}
	return nil
}

// failedPlacements counts the placements blocked eval e stands for that
// more capacity could fix, from the eval that created it (its failures
// and queued allocations per task group). An eval whose creator is gone
// counts one.
func failedPlacements(v projections.View, e *events.Evaluation) (int, error) {
	if e.PreviousEval == "" {
		return 1, nil
	}
	prev, err := evals.Get(v, e.PreviousEval)
	if errors.Is(err, projections.ErrNotFound) {
		return 1, nil
	} else if err != nil {
		return 0, fmt.Errorf("capacity: read eval %s: %w", e.PreviousEval, err)
	}
	n := 0
	for tg, m := range prev.FailedTGAllocs {
		if CapacityFailure(m) {
			n += max(1, prev.QueuedAllocations[tg])
		}
	}
	return n, nil
}
