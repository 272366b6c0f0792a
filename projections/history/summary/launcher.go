package summary

import (
	"strings"

	"github.com/ordoplane/ordo/events"
)

// Launcher lines: providers, tenants, node requests and instances. A line
// read from another entity's timeline names the entity it is about.
func init() {
	register("ProviderApplied", func(s *step, p events.Payload) string {
		c := &p.(*events.ProviderApplied).Provider
		if s.t.kind != events.KindProvider {
			return "provider " + c.Name + " applied"
		}
		created := !s.known()
		drv := s.set("Driver", c.Driver)
		prio := s.set("Priority", itoa(c.Priority))
		pools := make([]string, len(c.Pools))
		for i, pl := range c.Pools {
			pools[i] = pl.Name
		}
		pl := s.set("Pools", strings.Join(pools, ","))
		if created {
			return "applied (driver " + c.Driver + ", priority " + itoa(c.Priority) + ", " + plural(len(c.Pools), "pool") + ")"
		}
		if line := join(trans("driver", drv), trans("priority", prio), trans("pools", pl)); line != "" {
			return "new configuration: " + line
		}
		return "new configuration"
	})
	register("ProviderDeleted", func(s *step, p events.Payload) string {
		name := p.(*events.ProviderDeleted).Name
		if s.t.kind != events.KindProvider {
			return "provider " + name + " deleted"
		}
		s.reset()
		return "deleted"
	})
	register("ProviderPaused", func(s *step, p events.Payload) string {
		e := p.(*events.ProviderPaused)
		who := ""
		if s.t.kind == events.KindProvider {
			s.set("Paused", btoa(e.Paused))
		} else {
			who = "provider " + e.Name + " "
		}
		if e.Paused {
			return who + "paused for request " + e.RequestID + paren(e.Reason)
		}
		return who + "unpaused" + paren(e.Reason)
	})
	register("ProviderLabelErrored", func(_ *step, p events.Payload) string {
		e := p.(*events.ProviderLabelErrored)
		return "label " + e.Label + " errored: " + e.Reason
	})
	register("TenantApplied", func(s *step, p events.Payload) string {
		t := &p.(*events.TenantApplied).Tenant
		created := !s.known()
		s.set("Name", t.Name)
		a := s.set("MaxServers", itoa(t.MaxServers))
		b := s.set("MaxCores", itoa(t.MaxCores))
		c := s.set("MaxRAMMB", itoa(t.MaxRAMMB))
		if created {
			return "created (max servers " + itoa(t.MaxServers) + ", cores " + itoa(t.MaxCores) + ", ram " + itoa(t.MaxRAMMB) + " MB)"
		}
		if line := join(trans("max servers", a), trans("max cores", b), trans("max ram", c)); line != "" {
			return "updated: " + line
		}
		return "applied again, no change"
	})
	register("TenantDeleted", func(s *step, _ events.Payload) string {
		s.reset()
		return "deleted"
	})
	register("NodeRequestCreated", func(s *step, p events.Payload) string {
		r := &p.(*events.NodeRequestCreated).Request
		if s.t.kind != events.KindNodeRequest {
			return "node request " + r.ID + " created for " + strings.Join(r.Labels, ",")
		}
		s.set("State", events.RequestRequested)
		return "requested " + strings.Join(r.Labels, ", ") + paren("requestor "+r.Requestor)
	})
	// A request's events also reach its provider's and its instances'
	// timelines: there they name the request and change none of that
	// entity's fields (an instance's State is its own, not the request's).
	register("NodeRequestStateChanged", func(s *step, p events.Payload) string {
		e := p.(*events.NodeRequestStateChanged)
		who, st := requestState(s, e.ID, e.State)
		if e.State == events.RequestPending {
			return who + "accepted by " + e.Provider + " pool " + e.Pool
		}
		return who + "state " + stateArrow(st, e.State) + paren(e.Reason)
	})
	register("NodeRequestDeclined", func(s *step, p events.Payload) string {
		e := p.(*events.NodeRequestDeclined)
		who, _ := requestState(s, e.ID, "")
		return who + "declined by " + e.Provider + ": " + e.Reason
	})
	register("NodeRequestFulfilled", func(s *step, p events.Payload) string {
		e := p.(*events.NodeRequestFulfilled)
		who, _ := requestState(s, e.ID, events.RequestFulfilled)
		return who + "fulfilled by " + e.Provider + " with " + list(e.Instances, 5)
	})
	register("NodeRequestFailed", func(s *step, p events.Payload) string {
		e := p.(*events.NodeRequestFailed)
		who, _ := requestState(s, e.ID, events.RequestFailed)
		return who + "failed: " + e.Reason
	})
	register("NodeRequestDeleted", func(s *step, p events.Payload) string {
		if s.t.kind != events.KindNodeRequest {
			return "node request " + p.(*events.NodeRequestDeleted).ID + " deleted"
		}
		s.reset()
		return "deleted"
	})
	register("InstanceCreated", func(s *step, p events.Payload) string {
		i := &p.(*events.InstanceCreated).Instance
		if s.t.kind != events.KindInstance {
			return "instance " + i.ID + " (" + i.Label + ") building on " + i.Provider
		}
		s.set("State", events.InstanceBuilding)
		return "building " + i.Label + " on " + i.Provider + "/" + i.Pool + paren("requestor "+i.Requestor)
	})
	register("InstanceStateChanged", func(s *step, p events.Payload) string {
		e := p.(*events.InstanceStateChanged)
		st := s.set("State", e.State)
		line := "state " + stateArrow(st, e.State)
		if e.ExternalID != "" {
			line += " (external id " + e.ExternalID + ")"
		}
		return line + paren(e.Reason)
	})
	register("InstanceAssigned", func(_ *step, p events.Payload) string {
		e := p.(*events.InstanceAssigned)
		return "instance " + e.ID + " assigned to request " + e.RequestID + paren("requestor "+e.Requestor)
	})
	register("InstanceReleased", func(_ *step, p events.Payload) string {
		e := p.(*events.InstanceReleased)
		return "instance " + e.ID + " released from request " + e.RequestID
	})
	register("ComponentRegistered", func(s *step, p events.Payload) string {
		c := &p.(*events.ComponentRegistered).Component
		pools := make([]string, len(c.Pools))
		for i, pl := range c.Pools {
			pools[i] = pl.Provider + "/" + pl.Pool
		}
		list := strings.Join(pools, ",")
		if s.t.kind != events.KindComponent {
			return c.Kind + " on " + c.Server + " runs " + plural(len(c.Pools), "pool")
		}
		created := !s.known()
		ch := s.set("Pools", list)
		switch {
		case created:
			return "registered on " + c.Server + ": " + plural(len(c.Pools), "pool") + paren(list)
		case ch != nil:
			return "pools " + arrow(ch)
		}
		return "heartbeat"
	})
	register("ComponentDeregistered", func(s *step, p events.Payload) string {
		e := p.(*events.ComponentDeregistered)
		if s.t.kind != events.KindComponent {
			return e.Kind + " on " + e.Server + " deregistered"
		}
		s.reset()
		return "deregistered"
	})
	register("InstanceDeleted", func(s *step, p events.Payload) string {
		if s.t.kind != events.KindInstance {
			return "instance " + p.(*events.InstanceDeleted).ID + " deleted"
		}
		s.reset()
		return "deleted"
	})
}

// stateArrow is arrow(c), or state when it did not change.
func stateArrow(c *Change, state string) string {
	if c == nil {
		return state
	}
	return arrow(c)
}

// requestState records a node request's new state when the timeline is the
// request's own (state "" leaves it), and returns the change. On another
// entity's timeline it changes nothing and returns the words that name the
// request, to start the line with.
func requestState(s *step, id, state string) (who string, c *Change) {
	if s.t.kind != events.KindNodeRequest {
		return "node request " + id + " ", nil
	}
	if state == "" {
		return "", nil
	}
	return "", s.set("State", state)
}
