package summary

import (
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
)

// Service lines: an instance's history says when it appeared at which
// address, how its checks went and when and why it went; its node's,
// allocation's or job's history counts the instances.
func init() {
	register("ServicesRegistered", func(s *step, p events.Payload) string {
		r := p.(*events.ServicesRegistered)
		if s.t.kind != events.KindService {
			names := make([]string, 0, len(r.Services))
			for _, sv := range r.Services {
				if s.t.kind == events.KindNode || s.t.id == sv.AllocID || s.t.kind == events.KindJob {
					names = append(names, sv.ServiceName)
				}
			}
			return "services registered: " + strings.Join(names, ", ")
		}
		for _, sv := range r.Services {
			if sv.ID != s.t.id {
				continue
			}
			created := !s.known()
			addr := s.set("Address", sv.Address+":"+strconv.Itoa(sv.Port))
			var checks []string
			for _, c := range sv.Checks {
				if ch := s.set("Check "+c.Name, c.Status); ch != nil {
					checks = append(checks, trans("check "+c.Name, ch))
				}
			}
			if created {
				return "registered " + sv.ServiceName + " at " + sv.Address + ":" + strconv.Itoa(sv.Port) +
					" (alloc " + sv.AllocID + ", node " + sv.NodeID + ")"
			}
			parts := checks
			if addr != nil {
				parts = append([]string{trans("address", addr)}, parts...)
			}
			if len(parts) == 0 {
				return "updated"
			}
			return "updated, " + strings.Join(parts, ", ")
		}
		return "updated"
	})
	register("ServicesDeregistered", func(s *step, p events.Payload) string {
		r := p.(*events.ServicesDeregistered)
		why := ""
		if r.Reason != "" {
			why = " (" + r.Reason + ")"
		}
		if s.t.kind != events.KindService {
			return strconv.Itoa(len(r.IDs)) + " service instances deregistered" + why
		}
		s.reset()
		return "deregistered" + why
	})
}
