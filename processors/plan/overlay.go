package plan

import (
	"slices"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections/allocs"
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
	usage  map[string]scheduler.Usage
}

func withPlaced(st scheduler.State, placements []events.Allocation) scheduler.State {
	if len(placements) == 0 {
		return st
	}
	o := &placedOverlay{State: st, byID: map[string]*events.Allocation{}, byNode: map[string][]*events.Allocation{},
		usage: map[string]scheduler.Usage{}}
	for i := range placements {
		a := &placements[i]
		o.byID[a.ID] = a
		o.byNode[a.NodeID] = append(o.byNode[a.NodeID], a)
		u := o.usage[a.NodeID]
		u.Resources.CPU += a.Resources.CPU
		u.Resources.MemoryMB += a.Resources.MemoryMB
		u.Resources.DiskMB += a.Resources.DiskMB
		u.Allocs++
		u.Ports = append(u.Ports, allocs.HostPorts(a)...)
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

// NodeUsage adds the in-flight placements to the node's usage: their
// resources and ports (a placement the snapshot already holds counts
// twice, which only makes verification stricter).
func (o *placedOverlay) NodeUsage(nodeID string) scheduler.Usage {
	u := o.State.NodeUsage(nodeID)
	d, ok := o.usage[nodeID]
	if !ok {
		return u
	}
	u.Resources.CPU += d.Resources.CPU
	u.Resources.MemoryMB += d.Resources.MemoryMB
	u.Resources.DiskMB += d.Resources.DiskMB
	u.Allocs += d.Allocs
	if len(d.Ports) > 0 {
		u.Ports = append(slices.Clone(u.Ports), d.Ports...)
		slices.Sort(u.Ports)
	}
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
