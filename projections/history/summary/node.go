package summary

import (
	"fmt"
	"strings"
	"time"

	"github.com/ordoplane/ordo/events"
)

func init() {
	register("NodeRegistered", func(s *step, p events.Payload) string { return nodeRegistered(s, p.(*events.NodeRegistered)) })
	register("NodeStatusUpdated", func(s *step, p events.Payload) string {
		return nodeStatus(s, p.(*events.NodeStatusUpdated))
	})
	register("NodeEligibilityUpdated", func(s *step, p events.Payload) string {
		return nodeEligibility(s, p.(*events.NodeEligibilityUpdated))
	})
	register("NodeDrainUpdated", func(s *step, p events.Payload) string { return nodeDrain(s, p.(*events.NodeDrainUpdated)) })
	register("NodeAllocsUpdated", func(s *step, p events.Payload) string {
		if s.t.kind != events.KindNode {
			return "node " + p.(*events.NodeAllocsUpdated).ID + " reported its allocations"
		}
		return "reported its allocations"
	})
	register("NodeDeregistered", func(s *step, p events.Payload) string {
		if s.t.kind != events.KindNode {
			return "node " + p.(*events.NodeDeregistered).ID + " deregistered"
		}
		s.reset()
		return "deregistered (purged)"
	})
}

// healthyDrivers lists the drivers a node detected and reports healthy.
func healthyDrivers(drivers map[string]events.DriverInfo) string {
	var out []string
	for _, name := range sortedKeys(drivers) {
		if d := drivers[name]; d.Detected && d.Healthy {
			out = append(out, name)
		}
	}
	return strings.Join(out, ",")
}

func nodeRegistered(s *step, p *events.NodeRegistered) string {
	n := &p.Node
	if s.t.kind != events.KindNode {
		return "node " + n.ID + " registered"
	}
	created := !s.known()
	// A new node starts in the status the event carries (initializing when
	// unset) and eligible; a known one keeps both (the nodes projection).
	var status *Change
	if created {
		st := n.Status
		if st == "" {
			st = events.NodeStatusInitializing
		}
		status = s.set("Status", st)
		s.set("SchedulingEligibility", events.NodeEligible)
	} else if n.Status != "" {
		status = s.set("Status", n.Status)
	}
	changes := []string{
		trans("name", s.set("Name", n.Name)),
		trans("datacenter", s.set("Datacenter", n.Datacenter)),
		trans("class", s.set("NodeClass", n.NodeClass)),
		trans("pool", s.set("NodePool", n.NodePool)),
		trans("cpu", s.set("Resources.CPU", itoa(n.Resources.CPU))),
		trans("memory MB", s.set("Resources.MemoryMB", itoa(n.Resources.MemoryMB))),
		trans("drivers", s.set("Drivers", healthyDrivers(n.Drivers))),
		trans("http addr", s.set("HTTPAddr", n.HTTPAddr)),
	}
	if created {
		detail := []string{n.Datacenter}
		if n.NodeClass != "" {
			detail = append(detail, "class "+n.NodeClass)
		}
		detail = append(detail, "status "+s.get("Status"))
		if d := healthyDrivers(n.Drivers); d != "" {
			detail = append(detail, "drivers "+d)
		}
		return "registered" + paren(strings.Join(detail, ", "))
	}
	line := "registered again"
	if rest := join(append([]string{trans("status", status)}, changes...)...); rest != "" {
		line += ": " + rest
	}
	return line
}

func nodeStatus(s *step, p *events.NodeStatusUpdated) string {
	why := p.Description
	if p.MissedHeartbeat && why == "" {
		why = "missed heartbeat"
	}
	if s.t.kind != events.KindNode {
		return fmt.Sprintf("node %s status %s", p.ID, p.Status) + paren(why)
	}
	c := s.set("Status", p.Status)
	if c == nil {
		return "status stays " + p.Status + paren(why)
	}
	return "status " + arrow(c) + paren(why)
}

func nodeEligibility(s *step, p *events.NodeEligibilityUpdated) string {
	if s.t.kind != events.KindNode {
		return fmt.Sprintf("node %s %s", p.ID, p.Eligibility)
	}
	c := s.set("SchedulingEligibility", p.Eligibility)
	if c == nil {
		return "eligibility stays " + p.Eligibility
	}
	return "eligibility " + arrow(c)
}

// drainText describes a drain strategy; "" for none.
func drainText(ds *events.DrainStrategy) string {
	switch {
	case ds == nil:
		return ""
	case ds.Deadline < 0:
		return "force"
	case ds.Deadline == 0:
		return "no deadline"
	}
	text := "deadline " + time.Duration(ds.Deadline).String()
	if ds.IgnoreSystemJobs {
		text += ", ignoring system jobs"
	}
	return text
}

func nodeDrain(s *step, p *events.NodeDrainUpdated) string {
	if s.t.kind != events.KindNode {
		if p.DrainStrategy == nil {
			return "node " + p.ID + " drain stopped"
		}
		return "node " + p.ID + " draining" + paren(drainText(p.DrainStrategy))
	}
	was := s.get("Drain") != ""
	s.set("Drain", drainText(p.DrainStrategy))
	if p.DrainStrategy != nil {
		elig := s.set("SchedulingEligibility", events.NodeIneligible)
		what := "drain started"
		if was {
			what = "drain updated"
		}
		return join(what+paren(drainText(p.DrainStrategy)), trans("eligibility", elig))
	}
	line := "drain stopped"
	if !was {
		line = "drain stopped (it was not draining)"
	}
	if p.MarkEligible {
		return join(line, trans("eligibility", s.set("SchedulingEligibility", events.NodeEligible)))
	}
	return line
}
