package summary

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
)

func init() {
	register("DeploymentUpserted", func(s *step, p events.Payload) string {
		return deploymentUpserted(s, p.(*events.DeploymentUpserted))
	})
	register("DeploymentStatusUpdated", func(s *step, p events.Payload) string {
		return deploymentStatus(s, p.(*events.DeploymentStatusUpdated))
	})
}

func deploymentUpserted(s *step, p *events.DeploymentUpserted) string {
	d := &p.Deployment
	if s.t.kind != events.KindDeployment {
		line := fmt.Sprintf("deployment %s for version %d: %s", d.ID, d.JobVersion, d.Status)
		if s.t.kind != events.KindJob {
			line = fmt.Sprintf("deployment %s for job %s version %d: %s", d.ID, d.JobID, d.JobVersion, d.Status)
		}
		return line
	}
	created := !s.known()
	status := s.set("Status", d.Status)
	s.set("StatusDescription", d.StatusDescription)
	s.set("JobVersion", utoa(d.JobVersion))
	fields := map[string]map[string]string{
		"].DesiredTotal": {}, "].PlacedAllocs": {}, "].HealthyAllocs": {}, "].UnhealthyAllocs": {},
		"].DesiredCanaries": {}, "].Promoted": {},
	}
	for name, g := range d.TaskGroups {
		if g == nil {
			continue
		}
		fields["].DesiredTotal"][name] = itoa(g.DesiredTotal)
		fields["].PlacedAllocs"][name] = itoa(g.PlacedAllocs)
		fields["].HealthyAllocs"][name] = itoa(g.HealthyAllocs)
		fields["].UnhealthyAllocs"][name] = itoa(g.UnhealthyAllocs)
		if g.DesiredCanaries > 0 {
			fields["].DesiredCanaries"][name] = itoa(g.DesiredCanaries)
			fields["].Promoted"][name] = btoa(g.Promoted)
		}
	}
	var groupChanges []*Change
	for _, suffix := range sortedKeys(fields) {
		groupChanges = append(groupChanges, s.setFamily("TaskGroups[", suffix, fields[suffix])...)
	}
	if created {
		var groups []string
		for _, name := range sortedKeys(d.TaskGroups) {
			if g := d.TaskGroups[name]; g != nil {
				groups = append(groups, fmt.Sprintf("%s %d/%d healthy", name, g.HealthyAllocs, g.DesiredTotal))
			}
		}
		detail := "status " + d.Status
		if len(groups) > 0 {
			detail += "; " + strings.Join(groups, ", ")
		}
		return fmt.Sprintf("created for job %s version %d (%s)", d.JobID, d.JobVersion, detail)
	}
	var parts []string
	if status != nil {
		parts = append(parts, "status "+arrow(status)+paren(d.StatusDescription))
	}
	for _, c := range groupChanges {
		group, field, _ := strings.Cut(c.Field[len("TaskGroups["):], "].")
		label := map[string]string{"DesiredTotal": "desired", "PlacedAllocs": "placed", "HealthyAllocs": "healthy",
			"UnhealthyAllocs": "unhealthy", "DesiredCanaries": "canaries", "Promoted": "promoted"}[field]
		parts = append(parts, trans(group+" "+label, c))
	}
	if line := join(parts...); line != "" {
		return line
	}
	return "updated, status " + d.Status
}

func deploymentStatus(s *step, p *events.DeploymentStatusUpdated) string {
	if s.t.kind != events.KindDeployment {
		return fmt.Sprintf("deployment %s status %s", p.ID, p.Status) + paren(p.StatusDescription)
	}
	var parts []string
	if p.Status != "" {
		if c := s.set("Status", p.Status); c != nil {
			parts = append(parts, "status "+arrow(c)+paren(p.StatusDescription))
		}
	}
	s.set("StatusDescription", p.StatusDescription)
	if p.Promote {
		promoted := s.family("TaskGroups[", "].Promoted")
		for _, g := range sortedKeys(promoted) {
			if len(p.Groups) == 0 || slices.Contains(p.Groups, g) {
				s.set("TaskGroups["+g+"].Promoted", "true")
			}
		}
		if len(p.Groups) > 0 {
			parts = append(parts, "canaries of "+strings.Join(p.Groups, ", ")+" promoted")
		} else {
			parts = append(parts, "canaries promoted")
		}
	}
	if line := join(parts...); line != "" {
		return line
	}
	return "status " + p.Status + paren(p.StatusDescription)
}
