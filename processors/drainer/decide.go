package drainer

import (
	"cmp"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
)

// drainNode is a draining node as decide reads it.
type drainNode struct {
	ID string
	// ModifyIndex is the node row's modify index, the precondition of its
	// completion.
	ModifyIndex uint64
	Strategy    events.DrainStrategy
}

// jobKey names a job.
type jobKey struct{ ns, id string }

// groupKey names a task group of a job.
type groupKey struct {
	jobKey
	group string
}

// state is what decide reads, derived from the projections at one index:
// the draining nodes, and every allocation and the latest version of every
// job that has an allocation on one of them still to migrate or migrating.
type state struct {
	// Nodes are the draining nodes, by id.
	Nodes []drainNode
	// Allocs are the allocations of the jobs concerned, terminal ones
	// included (a replacement chain may pass through them), by id.
	Allocs map[string]*events.Allocation
	// Jobs are those jobs; a purged job is missing.
	Jobs map[jobKey]*events.Job
}

// reason says why an allocation is marked.
type reason string

const (
	// reasonPaced: the group's migrate max_parallel lets it go.
	reasonPaced reason = "paced"
	// reasonSystem: a system allocation, once everything else has left.
	reasonSystem reason = "system"
	// reasonDeadline: the node's drain deadline passed.
	reasonDeadline reason = "deadline"
)

// mark is one allocation to mark to migrate.
type mark struct {
	NodeID, AllocID string
	Reason          reason
}

// plan is what decide asks for.
type plan struct {
	// Marks are the allocations to mark, by node then allocation.
	Marks []mark
	// Complete are the nodes whose drain is done, by id.
	Complete []drainNode
	// Next is the earliest force deadline still to come (Unix ns); 0 when
	// none is, so nothing changes with time alone.
	Next int64
}

// decide is the drainer's pure core (Nomad's drainer rules) at leader time
// now (Unix ns):
//
//   - Per job task group, at most its migrate max_parallel (default 1)
//     allocations migrate at a time, across every node: an allocation
//     migrates from being marked until its replacement runs (and, when the
//     replacement belongs to a deployment, is healthy). Unmarked service
//     allocations on draining nodes are marked in node then allocation
//     order as that budget allows.
//   - Batch allocations are left to finish; system and sysbatch ones are
//     marked once no other allocation is left live on their node, and are
//     never marked on a node draining with IgnoreSystemJobs.
//   - Past a node's force deadline every allocation left on it (but ignored
//     system ones) is marked at once.
//   - A node is done when every allocation on it that the drain concerns is
//     terminal (stopped by the scheduler once replaced, or finished).
func decide(s state, now int64) plan {
	var p plan
	// In flight per group: marked allocations whose migration has not
	// finished, counted once per replacement chain.
	inflight := map[groupKey]map[string]bool{}
	ids := make([]string, 0, len(s.Allocs))
	for id := range s.Allocs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		a := s.Allocs[id]
		if end, ok := s.migrating(a); ok {
			gk := groupOf(a)
			if inflight[gk] == nil {
				inflight[gk] = map[string]bool{}
			}
			inflight[gk][end] = true
		}
	}

	onNode := map[string][]*events.Allocation{}
	for _, id := range ids {
		a := s.Allocs[id]
		onNode[a.NodeID] = append(onNode[a.NodeID], a)
	}
	candidates := map[groupKey][]mark{}
	for _, n := range s.Nodes {
		forced := n.Strategy.ForceDeadline != 0 && now >= n.Strategy.ForceDeadline
		done, othersLive := true, false
		var system []*events.Allocation
		for _, a := range onNode[n.ID] {
			sys := s.isSystem(a)
			if sys && n.Strategy.IgnoreSystemJobs {
				continue
			}
			if a.Terminal() {
				continue
			}
			done = false
			if !sys {
				othersLive = true
			}
			if isTrue(a.DesiredTransition.Migrate) {
				continue
			}
			switch {
			case forced:
				p.Marks = append(p.Marks, mark{NodeID: n.ID, AllocID: a.ID, Reason: reasonDeadline})
			case sys:
				system = append(system, a)
			case s.jobType(a) == events.JobTypeBatch:
				// Left to finish until the deadline.
			default:
				gk := groupOf(a)
				candidates[gk] = append(candidates[gk], mark{NodeID: n.ID, AllocID: a.ID, Reason: reasonPaced})
			}
		}
		if !othersLive {
			for _, a := range system {
				p.Marks = append(p.Marks, mark{NodeID: n.ID, AllocID: a.ID, Reason: reasonSystem})
			}
		}
		switch {
		case done:
			p.Complete = append(p.Complete, n)
		case n.Strategy.ForceDeadline > now && (p.Next == 0 || n.Strategy.ForceDeadline < p.Next):
			p.Next = n.Strategy.ForceDeadline
		}
	}

	groups := make([]groupKey, 0, len(candidates))
	for gk := range candidates {
		groups = append(groups, gk)
	}
	slices.SortFunc(groups, compareGroups)
	for _, gk := range groups {
		budget := s.maxParallel(gk) - len(inflight[gk])
		for _, m := range candidates[gk] {
			if budget <= 0 {
				break
			}
			p.Marks = append(p.Marks, m)
			budget--
		}
	}
	slices.SortFunc(p.Marks, func(a, b mark) int {
		return cmp.Or(strings.Compare(a.NodeID, b.NodeID), strings.Compare(a.AllocID, b.AllocID))
	})
	return p
}

// maxChain bounds how far decide follows NextAllocation links.
const maxChain = 64

// migrating reports whether a is marked and its migration has not
// finished, and names the allocation that ends its replacement chain (a
// itself when it has no replacement yet). A marked allocation with no
// replacement migrates while it is live (the scheduler has yet to place
// one); one whose latest replacement is live migrates until that
// replacement is ready. A chain ending in a terminal allocation, or in one
// no longer stored, is over: what happens next is the rescheduler's.
func (s state) migrating(a *events.Allocation) (string, bool) {
	if !isTrue(a.DesiredTransition.Migrate) {
		return "", false
	}
	end := a
	for range maxChain {
		if end.NextAllocation == "" {
			break
		}
		next, ok := s.Allocs[end.NextAllocation]
		if !ok {
			return "", false
		}
		end = next
	}
	if end == a {
		return a.ID, !a.Terminal()
	}
	if end.Terminal() {
		return "", false
	}
	return end.ID, !ready(end)
}

// ready reports whether a replacement has finished migrating: running, and
// healthy when it belongs to a deployment.
func ready(r *events.Allocation) bool {
	if r.ClientStatus != events.AllocClientRunning {
		return false
	}
	if r.DeploymentID == "" {
		return true
	}
	return r.DeploymentStatus != nil && isTrue(r.DeploymentStatus.Healthy)
}

func (s state) job(a *events.Allocation) *events.Job { return s.Jobs[jobKey{a.Namespace, a.JobID}] }

// jobType returns the allocation's job type; a purged job's allocations
// count as a service's.
func (s state) jobType(a *events.Allocation) string {
	if j := s.job(a); j != nil {
		return j.Type
	}
	return events.JobTypeService
}

func (s state) isSystem(a *events.Allocation) bool {
	t := s.jobType(a)
	return t == events.JobTypeSystem || t == events.JobTypeSysbatch
}

// maxParallel returns the group's migrate max_parallel; the default for a
// group (or job) that is gone.
func (s state) maxParallel(gk groupKey) int {
	j := s.Jobs[gk.jobKey]
	if j == nil {
		return events.DefaultMigrateMaxParallel
	}
	for i := range j.TaskGroups {
		if tg := &j.TaskGroups[i]; tg.Name == gk.group {
			return tg.MigrateMaxParallel()
		}
	}
	return events.DefaultMigrateMaxParallel
}

func groupOf(a *events.Allocation) groupKey {
	return groupKey{jobKey{a.Namespace, a.JobID}, a.TaskGroup}
}

func compareGroups(a, b groupKey) int {
	return cmp.Or(strings.Compare(a.ns, b.ns), strings.Compare(a.id, b.id), strings.Compare(a.group, b.group))
}

func isTrue(b *bool) bool { return b != nil && *b }
