package plan

import (
	"errors"
	"slices"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections/allocs"
)

// Rejection reasons, per node.
const (
	ReasonNodeMissing    = "node does not exist"
	ReasonNodeNotReady   = "node is not ready"
	ReasonNodeIneligible = "node is ineligible"
	ReasonNodeDraining   = "node is draining"
	ReasonExhausted      = "resources exhausted"
	// ReasonPortCollision refuses placements whose host ports the node
	// reserves, a live allocation there holds (one committed since the
	// plan was computed, say), or another placement of the plan on the
	// node takes too: a port is never given twice on a node.
	ReasonPortCollision = "port collision"
	// ReasonAllocElsewhere refuses a placement of an allocation the state
	// holds on another node: an allocation never moves between nodes, and
	// placing its id elsewhere would move it (a scheduler minting an id
	// twice). The node is not at fault, so the tracker does not count it.
	ReasonAllocElsewhere = "placement of an allocation that is on another node"
)

// Result is what of a plan may be committed.
type Result struct {
	// Placements, Stops and Updates are the plan's parts that fit.
	Placements []events.Allocation
	Stops      []events.AllocDesiredUpdate
	Updates    []events.AllocDesiredUpdate
	// Deployment and FollowUps pass through from the plan.
	Deployment *events.Deployment
	FollowUps  []events.Evaluation
	// RejectedNodes are the nodes whose part of the plan was dropped, by id;
	// Reasons says why, per node.
	RejectedNodes []string
	Reasons       map[string]string
	// Moved names, per node refused with ReasonAllocElsewhere, the
	// allocations the plan would have moved there.
	Moved map[string][]string
	// RefreshIndex is non-zero when something was rejected: the worker must
	// refresh its snapshot to at least this index and schedule again.
	RefreshIndex uint64
	// IneligibleNodes are nodes the rejection tracker says to mark
	// ineligible (N11); only Evaluator fills it.
	IneligibleNodes []string
}

// ErrEvalDeleted is returned for a plan whose evaluation was deleted (eval
// delete or garbage collection) while it was planned: the commit's
// precondition that the eval exists refused it, nothing was placed, and the
// worker drops the eval.
var ErrEvalDeleted = errors.New("ordo: the plan's evaluation was deleted")

// FullCommit reports whether the whole plan fits.
func (r *Result) FullCommit() bool { return len(r.RejectedNodes) == 0 }

// Evaluate re-checks plan against st, the latest state, node by node: a
// node that gets placements must still exist, be ready, eligible and not
// draining, get no allocation st holds on another node, and have room
// for the placements next to every allocation it runs now (including
// ones committed since the plan was computed) less the plan's stops on
// it, and give them host ports no allocation left there holds, the node
// does not reserve and no other placement there takes. A node that fails loses its whole part of the plan (placements,
// stops and updates); a node that only loses allocations always fits.
// Evaluate is pure.
func Evaluate(plan *scheduler.Plan, st scheduler.State) Result {
	res := Result{Deployment: plan.Deployment, FollowUps: plan.FollowUps}
	nodeOf := map[string]string{} // alloc id → node id, for stops and updates
	placed := map[string][]*events.Allocation{}
	var nodeIDs []string
	for i := range plan.Placements {
		a := &plan.Placements[i]
		if _, ok := placed[a.NodeID]; !ok {
			nodeIDs = append(nodeIDs, a.NodeID)
		}
		placed[a.NodeID] = append(placed[a.NodeID], a)
	}
	stopping := map[string]bool{}
	for _, u := range plan.Stops {
		stopping[u.ID] = true
	}
	if len(plan.Stops)+len(plan.Updates) > 0 {
		for _, a := range st.AllocsByJob(plan.Namespace, plan.JobID) {
			nodeOf[a.ID] = a.NodeID
		}
	}
	stopsOn := map[string]bool{} // nodes the plan also stops allocations on
	for id := range stopping {
		stopsOn[nodeOf[id]] = true
	}
	rejected := map[string]string{}
	slices.Sort(nodeIDs)
	for _, id := range nodeIDs {
		if moved := elsewhere(st, id, placed[id]); len(moved) > 0 {
			rejected[id] = ReasonAllocElsewhere
			if res.Moved == nil {
				res.Moved = map[string][]string{}
			}
			res.Moved[id] = moved
		} else if reason := evaluateNode(st, id, placed[id], stopping, stopsOn[id]); reason != "" {
			rejected[id] = reason
		}
	}
	for i := range plan.Placements {
		if _, bad := rejected[plan.Placements[i].NodeID]; !bad {
			res.Placements = append(res.Placements, plan.Placements[i])
		}
	}
	for _, u := range plan.Stops {
		if _, bad := rejected[nodeOf[u.ID]]; !bad {
			res.Stops = append(res.Stops, u)
		}
	}
	for _, u := range plan.Updates {
		if _, bad := rejected[nodeOf[u.ID]]; !bad {
			res.Updates = append(res.Updates, u)
		}
	}
	if len(rejected) > 0 {
		res.Reasons = rejected
		for id := range rejected {
			res.RejectedNodes = append(res.RejectedNodes, id)
		}
		slices.Sort(res.RejectedNodes)
		res.RefreshIndex = st.Index()
	}
	return res
}

// elsewhere returns the placements on node id that name an allocation st
// holds on another node. An allocation placed again on its own node (an
// in-place update, or a plan submitted again) is not among them.
func elsewhere(st scheduler.State, id string, placements []*events.Allocation) []string {
	var out []string
	for _, a := range placements {
		if old, ok := st.Alloc(a.ID); ok && old.NodeID != id {
			out = append(out, a.ID)
		}
	}
	return out
}

// evaluateNode returns why node id cannot take placements, or "". The
// node's usage table answers the common case; when the plan also stops
// allocations there, or the placements do not fit on top of the usage
// (they may already be committed, by a retried plan), it counts the node's
// allocations one by one.
func evaluateNode(st scheduler.State, id string, placements []*events.Allocation, stopping map[string]bool, stops bool) string {
	n, ok := st.Node(id)
	switch {
	case !ok:
		return ReasonNodeMissing
	case n.Status != events.NodeStatusReady:
		return ReasonNodeNotReady
	case n.SchedulingEligibility == events.NodeIneligible:
		return ReasonNodeIneligible
	case n.Drain:
		return ReasonNodeDraining
	}
	if !stops {
		u := st.NodeUsage(id)
		cpu, mem, disk := u.Resources.CPU, u.Resources.MemoryMB, u.Resources.DiskMB
		for _, a := range placements {
			cpu += a.Resources.CPU
			mem += a.Resources.MemoryMB
			disk += a.Resources.DiskMB
		}
		if fits(n, cpu, mem, disk) && portsFree(n, u.Ports, placements) {
			return ""
		}
	}
	var cpu, mem, disk int
	var held []int
	seen := map[string]bool{}
	for _, a := range st.AllocsByNode(id) {
		seen[a.ID] = true
		if a.Terminal() || stopping[a.ID] {
			continue
		}
		cpu += a.Resources.CPU
		mem += a.Resources.MemoryMB
		disk += a.Resources.DiskMB
	}
	placedIDs := make(map[string]bool, len(placements))
	for _, a := range placements {
		placedIDs[a.ID] = true
		if seen[a.ID] {
			continue // already committed (a retried plan)
		}
		cpu += a.Resources.CPU
		mem += a.Resources.MemoryMB
		disk += a.Resources.DiskMB
	}
	if !fits(n, cpu, mem, disk) {
		return ReasonExhausted
	}
	for _, a := range st.AllocsByNode(id) {
		// A placement already committed holds its ports for itself.
		if !a.Terminal() && !stopping[a.ID] && !placedIDs[a.ID] {
			held = append(held, allocs.HostPorts(a)...)
		}
	}
	slices.Sort(held)
	if !portsFree(n, held, placements) {
		return ReasonPortCollision
	}
	return ""
}

// portsFree reports whether placements may take their host ports on node
// n: each in 1-65535, not reserved by n, not in held (ascending: the
// ports the node's live allocations hold) and not taken by another of
// placements.
func portsFree(n *scheduler.Node, held []int, placements []*events.Allocation) bool {
	var reserved []events.PortRange
	parsed := false
	taken := map[int]bool{}
	for _, a := range placements {
		for _, p := range a.AllocatedResources.Ports() {
			if p.Value < 1 || p.Value > 65535 || taken[p.Value] {
				return false
			}
			taken[p.Value] = true
			if _, ok := slices.BinarySearch(held, p.Value); ok {
				return false
			}
			if !parsed {
				reserved, _ = events.ParsePortList(n.ReservedPorts)
				parsed = true
			}
			if events.PortInList(reserved, p.Value) {
				return false
			}
		}
	}
	return true
}

func fits(n *scheduler.Node, cpu, mem, disk int) bool {
	return cpu <= n.Resources.CPU-n.Reserved.CPU && mem <= n.Resources.MemoryMB-n.Reserved.MemoryMB &&
		(n.Resources.DiskMB == 0 || disk <= n.Resources.DiskMB-n.Reserved.DiskMB)
}
