package summary

import (
	"fmt"

	"github.com/ordoplane/ordo/events"
)

func init() {
	register("AllocsPlaced", func(s *step, p events.Payload) string { return allocsPlaced(s, p.(*events.AllocsPlaced)) })
	register("AllocsDesiredUpdated", func(s *step, p events.Payload) string {
		return allocsDesired(s, p.(*events.AllocsDesiredUpdated))
	})
	register("AllocsClientUpdated", func(s *step, p events.Payload) string {
		return allocsClient(s, p.(*events.AllocsClientUpdated))
	})
	register("AllocsDeleted", func(s *step, p events.Payload) string { return allocsDeleted(s, p.(*events.AllocsDeleted)) })
}

// allocLabel names an allocation in a line about several: "web.web[0] (id)".
func allocLabel(name, id string) string {
	if name == "" {
		return id
	}
	return name + " (" + id + ")"
}

func byEval(eval string) string {
	if eval == "" {
		return ""
	}
	return " by eval " + eval
}

func allocsPlaced(s *step, p *events.AllocsPlaced) string {
	switch s.t.kind {
	case events.KindAlloc:
		for i := range p.Allocs {
			if a := &p.Allocs[i]; a.ID == s.t.id {
				return allocPlaced(s, p.EvalID, a)
			}
		}
		return "placement" + byEval(p.EvalID) + " (the allocation is not in it)"
	case events.KindNode:
		var names []string
		for _, a := range p.Allocs {
			if a.NodeID == s.t.id {
				names = append(names, allocLabel(a.Name, a.ID))
			}
		}
		if len(names) == 1 {
			return "alloc " + names[0] + " placed" + byEval(p.EvalID)
		}
		return fmt.Sprintf("%s placed%s: %s", plural(len(names), "alloc"), byEval(p.EvalID), list(names, 3))
	case events.KindEval:
		return fmt.Sprintf("placed %s: %s", plural(len(p.Allocs), "alloc"), placements(p.Allocs))
	}
	line := plural(len(p.Allocs), "alloc")
	if len(p.Allocs) > 0 && s.t.kind != events.KindJob {
		line += " of job " + p.Allocs[0].JobID
	}
	line += " placed" + byEval(p.EvalID)
	if len(p.Allocs) > 0 {
		line += fmt.Sprintf(" (job version %d): %s", p.Allocs[0].JobVersion, placements(p.Allocs))
	}
	return line
}

// placements lists "name on node" for up to three allocations.
func placements(allocs []events.Allocation) string {
	items := make([]string, 0, len(allocs))
	for _, a := range allocs {
		items = append(items, allocLabel(a.Name, a.ID)+" on "+a.NodeID)
	}
	return list(items, 3)
}

func allocPlaced(s *step, eval string, a *events.Allocation) string {
	placedBefore := s.get("NodeID") != ""
	node := s.set("NodeID", a.NodeID)
	version := s.set("JobVersion", utoa(a.JobVersion))
	desired := s.set("DesiredStatus", a.DesiredStatus)
	s.set("DesiredDescription", a.DesiredDescription)
	client := s.set("ClientStatus", a.ClientStatus)
	s.set("DeploymentID", a.DeploymentID)
	s.set("PreviousAllocation", a.PreviousAllocation)
	if !placedBefore {
		line := "placed on node " + a.NodeID + byEval(eval)
		if a.PreviousAllocation != "" {
			line += ", replacing alloc " + a.PreviousAllocation
		}
		detail := a.Name
		if detail != "" {
			detail += ", "
		}
		detail += fmt.Sprintf("job version %d", a.JobVersion)
		if a.DeploymentID != "" {
			detail += ", deployment " + a.DeploymentID
		}
		return line + paren(detail)
	}
	what := "updated in place"
	if node != nil {
		what = "moved"
	}
	return join(what+byEval(eval), trans("node", node), trans("job version", version),
		trans("desired status", desired), trans("client status", client))
}

func allocsDesired(s *step, p *events.AllocsDesiredUpdated) string {
	if s.t.kind == events.KindAlloc {
		for i := range p.Updates {
			if u := &p.Updates[i]; u.ID == s.t.id {
				return allocDesired(s, p.EvalID, u)
			}
		}
		return "desired update" + byEval(p.EvalID) + " (the allocation is not in it)"
	}
	var desired, client []string
	for _, u := range p.Updates {
		if u.DesiredStatus != "" {
			desired = append(desired, u.DesiredStatus)
		}
		if u.ClientStatus != "" {
			client = append(client, u.ClientStatus)
		}
	}
	line := plural(len(p.Updates), "alloc") + " updated" + byEval(p.EvalID)
	var parts []string
	if len(desired) > 0 {
		parts = append(parts, "desired "+counts(desired))
	}
	if len(client) > 0 {
		parts = append(parts, "client "+counts(client))
	}
	if len(parts) > 0 {
		line += ": " + join(parts...)
	}
	return line
}

func allocDesired(s *step, eval string, u *events.AllocDesiredUpdate) string {
	var parts []string
	if u.DesiredStatus != "" {
		c := s.set("DesiredStatus", u.DesiredStatus)
		if c != nil {
			parts = append(parts, "desired status "+arrow(c)+paren(u.DesiredDescription))
		}
	}
	if u.DesiredDescription != "" {
		if c := s.set("DesiredDescription", u.DesiredDescription); c != nil && len(parts) == 0 {
			parts = append(parts, "desired description "+arrow(c))
		}
	}
	if u.ClientStatus != "" {
		parts = append(parts, trans("client status", s.set("ClientStatus", u.ClientStatus)))
	}
	dt := u.DesiredTransition
	for _, f := range []struct {
		field string
		value *bool
		label string
	}{
		{"DesiredTransition.Migrate", dt.Migrate, "migrate"},
		{"DesiredTransition.Reschedule", dt.Reschedule, "reschedule"},
		{"DesiredTransition.ForceReschedule", dt.ForceReschedule, "force reschedule"},
		{"DesiredTransition.NoShutdownDelay", dt.NoShutdownDelay, "no shutdown delay"},
	} {
		if f.value == nil {
			continue
		}
		if c := s.set(f.field, btoa(*f.value)); c != nil {
			if *f.value {
				parts = append(parts, "marked "+f.label)
			} else {
				parts = append(parts, "unmarked "+f.label)
			}
		}
	}
	if u.FollowupEvalID != "" {
		if c := s.set("FollowupEvalID", u.FollowupEvalID); c != nil {
			parts = append(parts, "follow-up eval "+c.New)
		}
	}
	line := join(parts...)
	if line == "" {
		line = "desired state restated, no change"
	}
	if eval != "" {
		line += ", by eval " + eval
	}
	return line
}

func allocsClient(s *step, p *events.AllocsClientUpdated) string {
	if s.t.kind == events.KindAlloc {
		for i := range p.Updates {
			if u := &p.Updates[i]; u.ID == s.t.id {
				return allocClient(s, p.NodeID, u)
			}
		}
		return "client update from node " + p.NodeID + " (the allocation is not in it)"
	}
	statuses := make([]string, 0, len(p.Updates))
	for _, u := range p.Updates {
		statuses = append(statuses, u.ClientStatus)
	}
	if s.t.kind == events.KindNode {
		return fmt.Sprintf("reported %s: %s", plural(len(p.Updates), "alloc"), counts(statuses))
	}
	return fmt.Sprintf("node %s reported %s: %s", p.NodeID, plural(len(p.Updates), "alloc"), counts(statuses))
}

func allocClient(s *step, node string, u *events.AllocClientUpdate) string {
	// The allocs projection ignores a report from a node the allocation
	// is not on; so does the timeline.
	if on := s.get("NodeID"); on != "" && on != node {
		return fmt.Sprintf("client update from node %s ignored: the allocation is on node %s", node, on)
	}
	var parts []string
	if u.ClientStatus != "" {
		if c := s.set("ClientStatus", u.ClientStatus); c != nil {
			parts = append(parts, "client status "+arrow(c)+paren(u.ClientDescription))
		}
	}
	if c := s.set("ClientDescription", u.ClientDescription); c != nil && len(parts) == 0 && c.New != "" {
		parts = append(parts, "client description "+arrow(c))
	}
	if u.TaskStates != nil {
		states := map[string]string{}
		restarts := map[string]string{}
		for name, ts := range u.TaskStates {
			if ts == nil {
				continue
			}
			st := ts.State
			if ts.Failed {
				st += " (failed)"
			}
			states[name] = st
			if ts.Restarts > 0 {
				restarts[name] = itoa(ts.Restarts)
			}
		}
		for _, c := range s.setFamily("TaskStates[", "].State", states) {
			parts = append(parts, trans("task "+c.Field[len("TaskStates["):len(c.Field)-len("].State")], c))
		}
		for _, c := range s.setFamily("TaskStates[", "].Restarts", restarts) {
			if c.New != "" {
				parts = append(parts, fmt.Sprintf("task %s restarted (%s so far)", c.Field[len("TaskStates["):len(c.Field)-len("].Restarts")], c.New))
			}
		}
	}
	if ds := u.DeploymentStatus; ds != nil && ds.Healthy != nil {
		health := "unhealthy"
		if *ds.Healthy {
			health = "healthy"
		}
		parts = append(parts, trans("deployment health", s.set("DeploymentStatus.Healthy", health)))
	}
	if line := join(parts...); line != "" {
		return line
	}
	return "client update, no change"
}

func allocsDeleted(s *step, p *events.AllocsDeleted) string {
	if s.t.kind == events.KindAlloc {
		s.reset()
		return "garbage collected"
	}
	return plural(len(p.IDs), "alloc") + " garbage collected"
}
