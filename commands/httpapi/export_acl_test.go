package httpapi

import "sort"

// RoutePatterns returns every pattern the access table lists, sorted.
func RoutePatterns() []string {
	out := make([]string, 0, len(routeAccess))
	for p := range routeAccess {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Requirement describes a route's requirement for the ACL matrix test:
// kind is cluster, clusterOrManagement, public, anyone, token,
// management, ns, nsPath, node, agent, operator, vars or inHandler; arg is
// the capability or level.
func Requirement(pattern string) (kind, arg string) {
	a := routeAccess[pattern]
	lv := func(l level) string {
		if l == write {
			return "write"
		}
		return "read"
	}
	switch {
	case a.clusterOnly:
		return "cluster", ""
	case a.cluster && a.management:
		return "clusterOrManagement", ""
	case a.public:
		return "public", ""
	case a.anyone:
		return "anyone", ""
	case a.token:
		return "token", ""
	case a.management:
		return "management", ""
	case a.ns != "":
		return "ns", a.ns
	case a.nsPath != "":
		return "nsPath", a.nsPath
	case a.node != none:
		return "node", lv(a.node)
	case a.agent != none:
		return "agent", lv(a.agent)
	case a.operator != none:
		return "operator", lv(a.operator)
	case a.vars != "":
		return "vars", a.vars
	case a.inHandler != "":
		return "inHandler", a.inHandler
	}
	return "", ""
}
