package scheduler

import (
	"maps"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/csi"
)

func timeDuration(ns int64) time.Duration { return time.Duration(ns) }

// groupResources sums the resources of a group's tasks.
func groupResources(tg *events.TaskGroup) events.Resources {
	var r events.Resources
	for i := range tg.Tasks {
		if t := tg.Tasks[i].Resources; t != nil {
			r.CPU += t.CPU
			r.MemoryMB += t.MemoryMB
			r.DiskMB += t.DiskMB
		}
	}
	return r
}

// used returns what the live allocations on n use, minus the plan's stops
// and plus its placements; computed once per node and kept up to date.
func (s *sched) used(n *Node) *usage {
	if u, ok := s.usage[n.ID]; ok {
		return u
	}
	nu := s.st.NodeUsage(n.ID)
	r := nu.Resources
	u := &usage{cpu: r.CPU, mem: r.MemoryMB, disk: r.DiskMB, ports: nu.Ports}
	// Live allocations this plan already stopped free their share.
	if f, ok := s.freed[n.ID]; ok {
		u.cpu -= f.cpu
		u.mem -= f.mem
		u.disk -= f.disk
		u.portDelta = f.portDelta
	}
	s.usage[n.ID] = u
	return u
}

// fit reports whether r fits on n now; when not, it names the exhausted
// dimension. A node that reports no disk is not checked for disk.
func (s *sched) fit(n *Node, r events.Resources) (bool, string) {
	u := s.used(n)
	switch {
	case u.cpu+r.CPU > n.Resources.CPU-n.Reserved.CPU:
		return false, "cpu"
	case u.mem+r.MemoryMB > n.Resources.MemoryMB-n.Reserved.MemoryMB:
		return false, "memory"
	case n.Resources.DiskMB > 0 && u.disk+r.DiskMB > n.Resources.DiskMB-n.Reserved.DiskMB:
		return false, "disk"
	}
	return true, ""
}

// binPack scores how full n would be with r placed, in [0, 1]: fuller
// nodes score higher, so allocations pack and whole nodes stay free.
func (s *sched) binPack(n *Node, r events.Resources) float64 {
	u := s.used(n)
	frac := func(used, total int) float64 {
		if total <= 0 {
			return 1
		}
		return min(1, float64(used)/float64(total))
	}
	cpu := frac(u.cpu+r.CPU, n.Resources.CPU-n.Reserved.CPU)
	mem := frac(u.mem+r.MemoryMB, n.Resources.MemoryMB-n.Reserved.MemoryMB)
	return (cpu + mem) / 2
}

// feasibleFor returns the cached feasibility of group tg on n.
func (s *sched) feasibleFor(tg *events.TaskGroup, n *Node) feasResult {
	m := s.feas[tg.Name]
	if m == nil {
		m = map[string]feasResult{}
		s.feas[tg.Name] = m
	}
	if r, ok := m[n.ID]; ok {
		return r
	}
	ok, reason := s.ck.feasible(s.job, tg, n)
	r := feasResult{ok: ok, reason: reason}
	m[n.ID] = r
	s.recordClass(n, ok)
	return r
}

func (s *sched) newMetric() *events.AllocMetric {
	m := &events.AllocMetric{NodesInPool: s.nodesInPool}
	if len(s.nodesAvailable) > 0 {
		m.NodesAvailable = maps.Clone(s.nodesAvailable)
	}
	return m
}

func inc(m *map[string]int, k string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}

// selectNode picks a node for one allocation of group tg: it visits the
// candidates in the eval's walk (walk.go) from where the last placement
// stopped, skips nodes that are infeasible or full, scores up to limit
// nodes that fit and returns the best (ties go to the first seen), with
// the ports it gives
// the group's networks nets there (ports.go; nil without networks).
// avoid, when set, is a node a rescheduled allocation failed on,
// penalised; index is the allocation's name index (per-alloc CSI volumes,
// csi.go) and name its name (the seed of its dynamic ports). The metric
// explains the choice or the failure.
func (s *sched) selectNode(tg *events.TaskGroup, r events.Resources, nets []events.NetworkResource, avoid string, index int,
	name string) (*Node, *events.AllocatedResources, *events.AllocMetric) {
	m := s.newMetric()
	jobDistinct, groupDistinct := distinctHosts(s.job, tg)
	var best *Node
	var bestPorts *events.AllocatedResources
	bestScore := 0.0
	found := 0
	ps := PlacementScores{AllocName: name, TaskGroup: tg.Name}
	s.walk.begin() // walk.go
	for found < s.limit {
		node, ok := s.walk.next()
		if !ok {
			break
		}
		m.NodesEvaluated++
		if f := s.feasibleFor(tg, node); !f.ok {
			m.NodesFiltered++
			inc(&m.ConstraintFiltered, f.reason)
			if node.NodeClass != "" {
				inc(&m.ClassFiltered, node.NodeClass)
			}
			continue
		}
		if ok, why := s.csiFeasible(tg, index, node); !ok { // csi.go
			m.NodesFiltered++
			inc(&m.ConstraintFiltered, why)
			continue
		}
		collisions := s.onNodeGroup[node.ID+"\x00"+tg.Name]
		if (jobDistinct && s.onNode[node.ID] > 0) || (groupDistinct && collisions > 0) {
			m.NodesFiltered++
			inc(&m.ConstraintFiltered, reasonDistinctHosts)
			continue
		}
		if ok, dim := s.fit(node, r); !ok {
			m.NodesExhausted++
			inc(&m.DimensionExhausted, dim)
			if node.NodeClass != "" {
				inc(&m.ClassExhausted, node.NodeClass)
			}
			continue
		}
		ports, dim := s.assignPorts(nets, node, s.portSeed(name, node)) // ports.go
		if dim != "" {
			m.NodesExhausted++
			inc(&m.DimensionExhausted, dim)
			if node.NodeClass != "" {
				inc(&m.ClassExhausted, node.NodeClass)
			}
			continue
		}
		found++
		fit := s.fitScore(node, r) // algorithm.go: binpack or spread
		score, scorers := fit, 1.0
		anti := 0.0
		if collisions > 0 {
			// Job anti-affinity: spread a group's allocations.
			anti = -min(1, float64(collisions+1)/float64(max(1, tg.Count)))
			score += anti
			scorers++
		}
		penalised := avoid != "" && node.ID == avoid
		if penalised {
			score--
			scorers++
		}
		score /= scorers
		s.scoreOf(&ps, node, fit, anti, -1, score, collisions > 0, penalised) // scores.go
		if best == nil || score > bestScore {
			best, bestPorts, bestScore = node, ports, score
		}
	}
	if s.recordScores {
		if best != nil {
			ps.Chosen = best.ID
		}
		s.plan.Scores = append(s.plan.Scores, ps)
	}
	return best, bestPorts, m
}

// place records allocation a on node n in the plan and the usage.
func (s *sched) place(a events.Allocation, n *Node) {
	a.NodeID, a.NodeName = n.ID, n.Name
	u := s.used(n)
	u.cpu += a.Resources.CPU
	u.mem += a.Resources.MemoryMB
	u.disk += a.Resources.DiskMB
	s.movePorts(n.ID, allocs.HostPorts(&a), 1) // ports.go
	s.onNode[n.ID]++
	s.onNodeGroup[n.ID+"\x00"+a.TaskGroup]++
	s.plan.Placements = append(s.plan.Placements, a)
	if tg := group(s.job, a.TaskGroup); tg != nil && hasCSI(tg) {
		s.claimPlaced(tg, csi.AllocIndex(a.Name)) // csi.go
	}
}

// failed records a failed placement of group tg.
func (s *sched) failed(tg string, m *events.AllocMetric) {
	p := s.plan
	if p.FailedTGAllocs == nil {
		p.FailedTGAllocs = map[string]*events.AllocMetric{}
	}
	if prev, ok := p.FailedTGAllocs[tg]; ok {
		prev.CoalescedFailures++
	} else {
		p.FailedTGAllocs[tg] = m
	}
	if p.QueuedAllocations == nil {
		p.QueuedAllocations = map[string]int{}
	}
	p.QueuedAllocations[tg]++
}

// newAlloc returns a pending allocation of group tg named name, with the
// next id derived from the eval (nextID).
func (s *sched) newAlloc(tg *events.TaskGroup, name string) events.Allocation {
	id := s.nextID("alloc", &s.ids)
	return events.Allocation{
		ID: id, Namespace: s.job.Namespace, EvalID: s.eval.ID, Name: name, JobID: s.job.ID,
		JobVersion: s.job.Version, TaskGroup: tg.Name, Resources: groupResources(tg),
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending,
	}
}
