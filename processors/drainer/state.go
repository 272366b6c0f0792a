package drainer

import (
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
)

// load reads decide's state from v: the draining nodes, then the jobs
// with an allocation on one of them that is live or marked, with all
// their allocations (so migrations from other nodes count against the
// same max_parallel). Nothing else is read, so a leader with no drain
// reads only the nodes.
func load(v projections.View) (state, error) {
	s := state{Allocs: map[string]*events.Allocation{}, Jobs: map[jobKey]*events.Job{}}
	list, err := nodes.List(v, "")
	if err != nil {
		return s, fmt.Errorf("drainer: list nodes: %w", err)
	}
	var keys []jobKey
	seen := map[jobKey]bool{}
	for _, n := range list {
		if !n.Drain || n.DrainStrategy == nil {
			continue
		}
		s.Nodes = append(s.Nodes, drainNode{ID: n.ID, ModifyIndex: n.ModifyIndex, Strategy: events.DrainStrategy(*n.DrainStrategy)})
		on, err := allocs.ByNode(v, n.ID)
		if err != nil {
			return s, fmt.Errorf("drainer: allocations on node %s: %w", n.ID, err)
		}
		for _, a := range on {
			k := jobKey{a.Namespace, a.JobID}
			if seen[k] || (a.Terminal() && !isTrue(a.DesiredTransition.Migrate)) {
				continue
			}
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		j, err := jobs.Get(v, k.ns, k.id)
		switch {
		case err == nil:
			s.Jobs[k] = &j.Job
		case !errors.Is(err, projections.ErrNotFound):
			return s, fmt.Errorf("drainer: job %s/%s: %w", k.ns, k.id, err)
		}
		all, err := allocs.ByJob(v, k.ns, k.id)
		if err != nil {
			return s, fmt.Errorf("drainer: allocations of job %s/%s: %w", k.ns, k.id, err)
		}
		for _, a := range all {
			s.Allocs[a.ID] = &a.Allocation
		}
	}
	return s, nil
}
