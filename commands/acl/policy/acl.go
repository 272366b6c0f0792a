package policy

import (
	"slices"
	"sort"
	"strings"
)

// Level is a coarse access level of a node, agent, operator, quota or
// plugin rule; higher includes lower, except deny, which wins.
type Level uint8

// The levels.
const (
	LevelNone Level = iota
	LevelList
	LevelRead
	LevelWrite
	LevelDeny
)

func levelOf(p string) Level {
	switch p {
	case PolicyList:
		return LevelList
	case PolicyRead:
		return LevelRead
	case PolicyWrite:
		return LevelWrite
	case PolicyDeny:
		return LevelDeny
	}
	return LevelNone
}

func merge(a, b Level) Level {
	if a == LevelDeny || b == LevelDeny {
		return LevelDeny
	}
	return max(a, b)
}

// capSet is a set of capabilities; deny set means nothing is allowed.
type capSet map[string]struct{}

func (c capSet) add(caps ...string) {
	for _, x := range caps {
		c[x] = struct{}{}
	}
}

func (c capSet) has(x string) bool {
	if _, deny := c[CapDeny]; deny {
		return false
	}
	_, ok := c[x]
	return ok
}

type pathRule struct {
	glob string
	caps capSet
}

type nsRule struct {
	glob  string
	caps  capSet
	paths []pathRule
}

// ACL is a compiled set of policies.
type ACL struct {
	management bool
	// exact and globs hold namespace rules by label; globs sorted by label.
	exact                                map[string]*nsRule
	globs                                []*nsRule
	node, agent, operator, quota, plugin Level
}

// Management is the ACL of a management token: everything is allowed.
var Management = &ACL{management: true}

// Compile merges policies into an ACL. Nil policies are skipped.
func Compile(policies []*Policy) *ACL {
	a := &ACL{exact: map[string]*nsRule{}}
	rules := map[string]*nsRule{}
	for _, p := range policies {
		if p == nil {
			continue
		}
		for _, ns := range p.Namespaces {
			r := rules[ns.Name]
			if r == nil {
				r = &nsRule{glob: ns.Name, caps: capSet{}}
				rules[ns.Name] = r
			}
			r.caps.add(ExpandNamespacePolicy(ns.Policy)...)
			r.caps.add(ns.Capabilities...)
			if ns.Variables != nil {
				for _, pr := range ns.Variables.Paths {
					i := slices.IndexFunc(r.paths, func(x pathRule) bool { return x.glob == pr.Path })
					if i < 0 {
						r.paths = append(r.paths, pathRule{glob: pr.Path, caps: capSet{}})
						i = len(r.paths) - 1
					}
					r.paths[i].caps.add(pr.Capabilities...)
				}
			}
		}
		for _, x := range []struct {
			dst *Level
			r   *Rule
		}{{&a.node, p.Node}, {&a.agent, p.Agent}, {&a.operator, p.Operator}, {&a.quota, p.Quota}, {&a.plugin, p.Plugin}} {
			if x.r != nil {
				*x.dst = merge(*x.dst, levelOf(x.r.Policy))
			}
		}
	}
	names := make([]string, 0, len(rules))
	for n := range rules {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := rules[n]
		sort.Slice(r.paths, func(i, j int) bool { return r.paths[i].glob < r.paths[j].glob })
		if strings.Contains(n, "*") {
			a.globs = append(a.globs, r)
		} else {
			a.exact[n] = r
		}
	}
	return a
}

// IsManagement reports whether the ACL allows everything.
func (a *ACL) IsManagement() bool { return a.management }

// globMatch reports whether name matches glob, where * matches any run of
// characters (possibly empty).
func globMatch(glob, name string) bool {
	for {
		i := strings.IndexByte(glob, '*')
		if i < 0 {
			return glob == name
		}
		if !strings.HasPrefix(name, glob[:i]) {
			return false
		}
		name, glob = name[i:], glob[i+1:]
		if glob == "" {
			return true
		}
		for k := 0; k <= len(name); k++ {
			if globMatch(glob, name[k:]) {
				return true
			}
		}
		return false
	}
}

// literal counts a glob's non-wildcard characters.
func literal(glob string) int { return len(glob) - strings.Count(glob, "*") }

// namespace returns the rule that governs ns: the exact one, else the
// matching glob with the most literal characters (ties: first by label).
func (a *ACL) namespace(ns string) *nsRule {
	if r, ok := a.exact[ns]; ok {
		return r
	}
	var best *nsRule
	for _, r := range a.globs {
		if globMatch(r.glob, ns) && (best == nil || literal(r.glob) > literal(best.glob)) {
			best = r
		}
	}
	return best
}

// AllowNamespace reports whether capability c is allowed in namespace ns.
func (a *ACL) AllowNamespace(ns, c string) bool {
	if a.management {
		return true
	}
	r := a.namespace(ns)
	return r != nil && r.caps.has(c)
}

// undenied returns the rule for namespace ns, or nil when there is none
// or it denies.
func (a *ACL) undenied(ns string) *nsRule {
	r := a.namespace(ns)
	if r == nil {
		return nil
	}
	if _, deny := r.caps[CapDeny]; deny {
		return nil
	}
	return r
}

// AllowAnyNamespace reports whether the ACL grants anything at all in
// namespace ns (Nomad lets such tokens read the namespace itself).
func (a *ACL) AllowAnyNamespace(ns string) bool {
	if a.management {
		return true
	}
	r := a.undenied(ns)
	return r != nil && (len(r.caps) > 0 || len(r.paths) > 0)
}

// AllowVariable reports whether op (read, write, list, destroy) is allowed
// on the variables path in namespace ns. write and read imply list.
func (a *ACL) AllowVariable(ns, path, op string) bool {
	if a.management {
		return true
	}
	r := a.undenied(ns)
	if r == nil {
		return false
	}
	var best *pathRule
	for i := range r.paths {
		p := &r.paths[i]
		if p.glob == path {
			best = p
			break
		}
		if globMatch(p.glob, path) && (best == nil || literal(p.glob) > literal(best.glob)) {
			best = p
		}
	}
	if best == nil {
		return false
	}
	if _, deny := best.caps[VarDeny]; deny {
		return false
	}
	if _, ok := best.caps[op]; ok {
		return true
	}
	if op == VarList {
		_, r := best.caps[VarRead]
		_, w := best.caps[VarWrite]
		return r || w
	}
	return false
}

func allow(l Level, want Level) bool { return l != LevelDeny && l >= want }

// AllowNode reports whether the node rule allows reading (write false) or writing.
func (a *ACL) AllowNode(write bool) bool { return a.management || allow(a.node, want(write)) }

// AllowAgent reports whether the agent rule allows reading or writing.
func (a *ACL) AllowAgent(write bool) bool { return a.management || allow(a.agent, want(write)) }

// AllowOperator reports whether the operator rule allows reading or writing.
func (a *ACL) AllowOperator(write bool) bool { return a.management || allow(a.operator, want(write)) }

// AllowQuota reports whether the quota rule allows reading or writing.
func (a *ACL) AllowQuota(write bool) bool { return a.management || allow(a.quota, want(write)) }

// AllowPlugin reports whether the plugin rule allows level l (list, read or write).
func (a *ACL) AllowPlugin(l Level) bool { return a.management || allow(a.plugin, l) }

func want(write bool) Level {
	if write {
		return LevelWrite
	}
	return LevelRead
}
