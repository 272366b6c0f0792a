package scheduler

import (
	"github.com/ordoplane/ordo/events"
)

// computeSystem reconciles a system or sysbatch job: one allocation of
// each group on every feasible node (N24 for sysbatch: a node whose
// allocation of this job version finished is done and is not placed on
// again).
func (s *sched) computeSystem() {
	sysbatch := s.job.Type == events.JobTypeSysbatch
	type key struct{ node, group string }
	live := map[key][]*events.Allocation{}
	done := map[key]bool{}
	groups := map[string]bool{}
	for i := range s.job.TaskGroups {
		groups[s.job.TaskGroups[i].Name] = true
	}
	for _, a := range s.allocs {
		if a.ServerTerminal() && !a.ClientTerminal() {
			continue
		}
		if !groups[a.TaskGroup] {
			if !a.Terminal() {
				s.stop(a, descGroupRemoved, lostStatus(s.nodes[a.NodeID]))
			}
			continue
		}
		k := key{a.NodeID, a.TaskGroup}
		if a.ClientTerminal() {
			if a.JobVersion == s.job.Version && a.ClientStatus != events.AllocClientLost {
				done[k] = true
			}
			continue
		}
		live[k] = append(live[k], a)
	}
	var timeouts []int64
	for _, n := range s.sortedNodes() {
		for i := range s.job.TaskGroups {
			tg := &s.job.TaskGroups[i]
			k := key{n.ID, tg.Name}
			existing := live[k]
			eligible := nodeSchedulable(n) && inPool(n.NodePool, s.job.NodePool) && inDatacenters(n.Datacenter, s.job.Datacenters)
			feasible := inPool(n.NodePool, s.job.NodePool) && inDatacenters(n.Datacenter, s.job.Datacenters) && s.feasibleFor(tg, n).ok
			tolerates, lostAfter, _ := disconnect(tg)
			var place *events.Allocation // the allocation a new one replaces, when placing
			placeNew := false
			for j, a := range existing {
				switch {
				case j > 0:
					s.stop(a, descDuplicate, "")
				case nodeLost(n) || (n.Status == events.NodeStatusDisconnected && (!tolerates || s.lostExpired(n, lostAfter))):
					desc := descLost
					if n.Status == events.NodeStatusDisconnected {
						desc = descLostDisconnect
						if tolerates {
							desc = descLostAfter
						}
					}
					s.stop(a, desc, events.AllocClientLost)
				case n.Status == events.NodeStatusDisconnected:
					s.markUnknown(a, n, lostAfter, &timeouts)
				case !feasible:
					s.stop(a, descNodeInfeasible, "")
				case isTrue(a.DesiredTransition.Migrate):
					s.stop(a, descMigrate, "")
				case eligible && s.destructive(tg, a):
					s.stop(a, descUpdate, "")
					place, placeNew = a, true
				}
			}
			if len(existing) == 0 && eligible && feasible && !(sysbatch && done[k]) {
				placeNew, _ = s.csiFeasible(tg, 0, n) // csi.go: a node without the volume's plugin is not for it
			}
			if !placeNew {
				continue
			}
			a := s.newAlloc(tg, allocName(s.job.ID, tg.Name, 0))
			if place != nil {
				a.PreviousAllocation = place.ID
			}
			m := s.newMetric()
			m.NodesEvaluated = 1
			ok, dim := s.fit(n, a.Resources)
			if ok {
				a.AllocatedResources, dim = s.assignPorts(tg.Networks, n, s.portSeed(a.Name, n)) // ports.go
				ok = dim == ""
			}
			if !ok {
				m.NodesExhausted = 1
				inc(&m.DimensionExhausted, dim)
				if n.NodeClass != "" {
					inc(&m.ClassExhausted, n.NodeClass)
				}
				if prev, ok := s.plan.FailedTGAllocs[tg.Name]; ok {
					prev.NodesEvaluated++
					prev.NodesExhausted++
					inc(&prev.DimensionExhausted, dim)
				}
				s.failed(tg.Name, m)
				continue
			}
			a.Metrics = m
			s.place(a, n)
		}
	}
	s.addTimeoutFollowUps(timeouts)
}

func lostStatus(n *Node) string {
	if nodeLost(n) {
		return events.AllocClientLost
	}
	return ""
}
