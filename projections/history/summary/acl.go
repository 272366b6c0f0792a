package summary

import (
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
)

// ACL lines say what a policy, role or token became, never a secret: a
// token line names its accessor, type and links; the secret's hash is not
// shown.
func init() {
	register("ACLPolicyUpserted", func(s *step, p events.Payload) string {
		v := p.(*events.ACLPolicyUpserted)
		created := !s.known()
		wl := ""
		if v.JobACL != nil {
			wl = workload(v.JobACL)
		}
		desc := s.set("Description", v.Description)
		rules := s.set("RulesLength", itoa(len(v.Rules)))
		attached := s.set("Workload", wl)
		if created {
			return "policy " + v.Name + " created" + paren(join(v.Description, attachedTo(wl)))
		}
		parts := []string{trans("description", desc), trans("workload", attached)}
		if rules != nil {
			parts = append(parts, "rules changed")
		}
		if out := join(parts...); out != "" {
			return "policy updated: " + out
		}
		return "policy re-applied unchanged"
	})
	register("ACLPolicyDeleted", func(s *step, p events.Payload) string {
		s.reset()
		return "policy " + p.(*events.ACLPolicyDeleted).Name + " deleted"
	})
	register("ACLRoleUpserted", func(s *step, p events.Payload) string {
		v := p.(*events.ACLRoleUpserted)
		created := !s.known()
		name := s.set("Name", v.Name)
		pols := s.set("Policies", sortedList(v.Policies))
		if created {
			return "role " + v.Name + " created, policies " + orNone(sortedList(v.Policies))
		}
		if out := join(trans("name", name), trans("policies", pols)); out != "" {
			return "role updated: " + out
		}
		return "role re-applied unchanged"
	})
	register("ACLRoleDeleted", func(s *step, p events.Payload) string {
		s.reset()
		return "role " + p.(*events.ACLRoleDeleted).ID + " deleted"
	})
	registerSensitive("ACLTokenUpserted", func(s *step, p events.Payload) string {
		v := p.(*events.ACLTokenUpserted)
		created := !s.known()
		name := s.set("Name", v.Name)
		pols := s.set("Policies", sortedList(v.Policies))
		roles := s.set("Roles", sortedList(v.Roles))
		exp := s.set("Expires", leaderTime(v.ExpirationTime))
		s.set("Type", v.Type)
		if created {
			out := v.Type + " token " + v.AccessorID + " created" + paren(v.Name)
			if v.Type != events.ACLTokenManagement {
				out += ", policies " + orNone(sortedList(v.Policies)) + ", roles " + orNone(sortedList(v.Roles))
			}
			if v.ExpirationTime != 0 {
				out += ", expires " + leaderTime(v.ExpirationTime)
			}
			return out
		}
		if out := join(trans("name", name), trans("policies", pols), trans("roles", roles), trans("expires", exp)); out != "" {
			return "token updated: " + out
		}
		return "token re-applied unchanged"
	})
	register("ACLTokensDeleted", func(s *step, p events.Payload) string {
		v := p.(*events.ACLTokensDeleted)
		why := "deleted"
		if v.Expired {
			why = "deleted (expired)"
		}
		if s.t.kind == events.KindACLToken {
			s.reset()
			return "token " + why
		}
		return plural(len(v.AccessorIDs), "token") + " " + why + ": " + list(v.AccessorIDs, 5)
	})
	register("ACLBootstrapped", func(s *step, p events.Payload) string {
		v := p.(*events.ACLBootstrapped)
		out := "ACL system bootstrapped: management token " + v.AccessorID
		if v.ResetIndex != 0 {
			out += " (reset index " + utoa(v.ResetIndex) + ")"
		}
		return out
	})
}

// workload renders an ACL policy's workload "namespace/job[/group[/task]]".
func workload(w *events.ACLWorkload) string {
	parts := []string{w.Namespace, w.JobID}
	if w.Group != "" {
		parts = append(parts, w.Group)
		if w.Task != "" {
			parts = append(parts, w.Task)
		}
	}
	return strings.Join(parts, "/")
}

func attachedTo(wl string) string {
	if wl == "" {
		return ""
	}
	return "attached to " + wl
}

// sortedList renders names sorted, comma-separated.
func sortedList(names []string) string {
	s := slices.Clone(names)
	slices.Sort(s)
	return strings.Join(s, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
