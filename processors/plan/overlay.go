package plan

import (
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// placedOverlay is a State with the placements of a plan still being
// committed added on top: the applier verifies the next plan against it
// while the previous one is in raft, as if it had applied. Only
// placements are added, never the in-flight plan's stops, so the overlay
// can only see less free capacity than there will be: if the in-flight
// commit fails, or the snapshot already holds it, the next plan is judged
// too strictly (a node refused, the worker re-plans), never too leniently.
type placedOverlay struct {
	scheduler.State
	byID   map[string]*events.Allocation
	byNode map[string][]*events.Allocation
	usage  map[string]events.Resources
}

func withPlaced(st scheduler.State, placements []events.Allocation) scheduler.State {
	if len(placements) == 0 {
		return st
	}
	o := &placedOverlay{State: st, byID: map[string]*events.Allocation{}, byNode: map[string][]*events.Allocation{},
		usage: map[string]events.Resources{}}
	for i := range placements {
		a := &placements[i]
		o.byID[a.ID] = a
		o.byNode[a.NodeID] = append(o.byNode[a.NodeID], a)
		u := o.usage[a.NodeID]
		u.CPU += a.Resources.CPU
		u.MemoryMB += a.Resources.MemoryMB
		u.DiskMB += a.Resources.DiskMB
		o.usage[a.NodeID] = u
	}
	return o
}

// Err passes the underlying State's read error through.
func (o *placedOverlay) Err() error {
	if e, ok := o.State.(interface{ Err() error }); ok {
		return e.Err()
	}
	return nil
}

// Alloc answers an in-flight placement as the snapshot's allocation.
func (o *placedOverlay) Alloc(id string) (*events.Allocation, bool) {
	if a, ok := o.byID[id]; ok {
		return a, true
	}
	return o.State.Alloc(id)
}

// NodeUsage adds the in-flight placements to the node's usage.
func (o *placedOverlay) NodeUsage(nodeID string) events.Resources {
	u := o.State.NodeUsage(nodeID)
	d := o.usage[nodeID]
	u.CPU += d.CPU
	u.MemoryMB += d.MemoryMB
	u.DiskMB += d.DiskMB
	return u
}

// AllocsByNode adds the in-flight placements the snapshot does not hold.
func (o *placedOverlay) AllocsByNode(nodeID string) []*events.Allocation {
	base := o.State.AllocsByNode(nodeID)
	extra := o.byNode[nodeID]
	if len(extra) == 0 {
		return base
	}
	seen := make(map[string]bool, len(base))
	for _, a := range base {
		seen[a.ID] = true
	}
	out := append([]*events.Allocation(nil), base...)
	for _, a := range extra {
		if !seen[a.ID] {
			out = append(out, a)
		}
	}
	return out
}
