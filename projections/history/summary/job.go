package summary

import (
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
)

func init() {
	register("JobRegistered", func(s *step, p events.Payload) string { return jobRegistered(s, p.(*events.JobRegistered)) })
	register("JobDeregistered", func(s *step, p events.Payload) string {
		return jobDeregistered(s, p.(*events.JobDeregistered))
	})
}

func jobRegistered(s *step, p *events.JobRegistered) string {
	j := &p.Job
	if s.t.kind != events.KindJob {
		return fmt.Sprintf("job %s registered version %d", j.ID, j.Version)
	}
	created := !s.known()
	version := s.set("Version", utoa(j.Version))
	typ := s.set("Type", j.Type)
	priority := s.set("Priority", itoa(j.Priority))
	stop := s.set("Stop", btoa(j.Stop))
	dcs := s.set("Datacenters", strings.Join(j.Datacenters, ","))
	pool := s.set("NodePool", j.NodePool)
	s.set("ParentID", j.ParentID)
	count := map[string]string{}
	for _, tg := range j.TaskGroups {
		count[tg.Name] = itoa(tg.Count)
	}
	countChanges := s.setFamily("TaskGroups[", "].Count", count)

	if created {
		groups := make([]string, 0, len(j.TaskGroups))
		for _, tg := range j.TaskGroups {
			groups = append(groups, fmt.Sprintf("%s %d", tg.Name, tg.Count))
		}
		detail := "type " + j.Type
		if len(groups) > 0 {
			detail += ", count " + strings.Join(groups, ", ")
		}
		if j.ParentID != "" {
			detail += ", from " + j.ParentID
		}
		if j.Stop {
			detail += ", stopped"
		}
		return fmt.Sprintf("registered version %d (%s)", j.Version, detail)
	}
	var parts []string
	for _, c := range countChanges {
		group := c.Field[len("TaskGroups[") : len(c.Field)-len("].Count")]
		switch {
		case c.Old == "":
			parts = append(parts, fmt.Sprintf("group %s added, count %s", group, c.New))
		case c.New == "":
			parts = append(parts, "group "+group+" removed")
		default:
			parts = append(parts, "count "+group+" "+arrow(c))
		}
	}
	if stop != nil {
		if j.Stop {
			parts = append(parts, "stopped")
		} else {
			parts = append(parts, "started again")
		}
	}
	parts = append(parts, trans("type", typ), trans("priority", priority), trans("datacenters", dcs), trans("node pool", pool))
	detail := join(parts...)
	if version == nil {
		return fmt.Sprintf("registered again at version %d, no change", j.Version) + paren(detail)
	}
	if detail == "" {
		detail = "spec changed"
	}
	return fmt.Sprintf("registered version %d (%s)", j.Version, detail)
}

func jobDeregistered(s *step, p *events.JobDeregistered) string {
	how := ""
	if p.NoShutdownDelay {
		how = " without shutdown delay"
	}
	if s.t.kind != events.KindJob {
		if p.Purge {
			return "job " + p.ID + " purged"
		}
		return "job " + p.ID + " stopped" + how
	}
	if p.Purge {
		s.reset()
		return "purged" + how
	}
	if s.set("Stop", "true") == nil {
		return "stopped again (it was stopped)" + how
	}
	return "stopped" + how
}
