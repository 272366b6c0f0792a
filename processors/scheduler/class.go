package scheduler

import (
	"strings"

	"github.com/ordoplane/ordo/events"
)

// computedClass returns node n's computed class (events.ComputedClass),
// computed once per Compute call and node.
func (ck *checker) computedClass(n *Node) string {
	if c, ok := ck.classes[n.ID]; ok {
		return c
	}
	c := n.ComputedClass()
	ck.classes[n.ID] = c
	return c
}

// recordClass notes in the plan whether a group was feasible on node n,
// by n's computed class: a class is eligible when some group of the job is
// feasible on it (Nomad's rule across task groups). A blocked eval carries
// the result, so only capacity changes on classes it may fit unblock it.
func (s *sched) recordClass(n *Node, ok bool) {
	if s.plan.ClassEligibility == nil {
		s.plan.ClassEligibility = map[string]bool{}
	}
	c := s.ck.computedClass(n)
	s.plan.ClassEligibility[c] = s.plan.ClassEligibility[c] || ok
}

// escapesClass reports whether a job's feasibility depends on more than a
// node's computed class: a constraint on a unique attribute, meta or node
// field (${attr.unique.*}, ${meta.unique.*}, ${node.unique.*}), or one
// that depends on the other allocations (distinct_hosts,
// distinct_property), or a CSI volume (claims and plugins, csi.go), or a
// host network other than the default (ports.go). A blocked eval of such a job is unblocked by any
// capacity change, whatever its class eligibility says.
func escapesClass(job *events.Job) bool {
	esc := func(cs []events.Constraint) bool {
		for _, c := range cs {
			if c.Operand == events.ConstraintDistinctHosts || c.Operand == "distinct_property" {
				return true
			}
			for _, t := range []string{c.LTarget, c.RTarget} {
				if strings.Contains(t, "${attr.unique.") || strings.Contains(t, "${meta.unique.") ||
					strings.Contains(t, "${node.unique.") {
					return true
				}
			}
		}
		return false
	}
	if esc(job.Constraints) {
		return true
	}
	for i := range job.TaskGroups {
		if esc(job.TaskGroups[i].Constraints) || hasCSI(&job.TaskGroups[i]) {
			return true
		}
	}
	return usesHostNetworks(job) // ports.go: addresses are not in the class
}
