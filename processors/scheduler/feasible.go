package scheduler

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
)

// Filter reasons recorded in AllocMetric.ConstraintFiltered besides the
// constraints themselves.
const (
	reasonMissingDrivers = "missing drivers"
	reasonDistinctHosts  = events.ConstraintDistinctHosts
)

// nodeSchedulable reports whether a node may receive new work: ready (never
// initializing, N1), eligible and not draining.
func nodeSchedulable(n *Node) bool {
	return n.Status == events.NodeStatusReady && n.SchedulingEligibility != events.NodeIneligible && !n.Drain
}

// inDatacenters reports whether dc matches one of the job's datacenters,
// which may use * and ? wildcards.
func inDatacenters(dc string, dcs []string) bool {
	if len(dcs) == 0 {
		return true
	}
	for _, p := range dcs {
		if p == dc || p == "*" {
			return true
		}
		if ok, err := path.Match(p, dc); err == nil && ok {
			return true
		}
	}
	return false
}

// inPool reports whether a node in pool serves a job of jobPool; the
// "all" pool takes every node, an empty pool is "default".
func inPool(pool, jobPool string) bool {
	if jobPool == "all" {
		return true
	}
	if pool == "" {
		pool = "default"
	}
	if jobPool == "" {
		jobPool = "default"
	}
	return pool == jobPool
}

// constraintString renders a constraint as metrics name it.
func constraintString(c events.Constraint) string {
	if c.Operand == events.ConstraintDistinctHosts {
		return events.ConstraintDistinctHosts
	}
	s := c.LTarget + " " + c.Operand
	if c.RTarget != "" {
		s += " " + c.RTarget
	}
	return s
}

// checker evaluates constraints; it caches compiled regexps, version
// constraints and nodes' computed classes (class.go) for one Compute call.
type checker struct {
	regexps  map[string]*regexp.Regexp
	versions map[string][]versionTerm
	classes  map[string]string
}

func newChecker() *checker {
	return &checker{regexps: map[string]*regexp.Regexp{}, versions: map[string][]versionTerm{}, classes: map[string]string{}}
}

// resolve interpolates a constraint target against a node: ${attr.*},
// ${meta.*}, ${node.datacenter|class|pool|unique.name|unique.id}; anything
// else is a literal.
func resolve(target string, n *Node) (string, bool) {
	if !strings.HasPrefix(target, "${") || !strings.HasSuffix(target, "}") {
		return target, true
	}
	key := target[2 : len(target)-1]
	switch {
	case strings.HasPrefix(key, "attr."):
		v, ok := n.Attributes[key[len("attr."):]]
		return v, ok
	case strings.HasPrefix(key, "meta."):
		v, ok := n.Meta[key[len("meta."):]]
		return v, ok
	}
	switch key {
	case "node.datacenter":
		return n.Datacenter, true
	case "node.class":
		return n.NodeClass, n.NodeClass != ""
	case "node.pool":
		if n.NodePool == "" {
			return "default", true
		}
		return n.NodePool, true
	case "node.unique.name":
		return n.Name, true
	case "node.unique.id":
		return n.ID, true
	}
	return "", false
}

// check reports whether node n satisfies constraint c. distinct_hosts is
// checked by the placer, which knows the plan; here it always passes.
func (ck *checker) check(c events.Constraint, n *Node) bool {
	if c.Operand == events.ConstraintDistinctHosts {
		return true
	}
	l, lok := resolve(c.LTarget, n)
	r, rok := resolve(c.RTarget, n)
	switch c.Operand {
	case "is_set":
		return lok
	case "is_not_set":
		return !lok
	case "!=", "not":
		return !lok || !rok || l != r
	}
	if !lok || !rok {
		return false
	}
	switch c.Operand {
	case "=", "==", "is", "":
		return l == r
	case "<", "<=", ">", ">=":
		return compareOrder(c.Operand, l, r)
	case "regexp":
		re, ok := ck.regexps[r]
		if !ok {
			re, _ = regexp.Compile(r)
			ck.regexps[r] = re
		}
		return re != nil && re.MatchString(l)
	case "set_contains", "set_contains_all":
		have := splitSet(l)
		for _, want := range strings.Split(r, ",") {
			if !have[strings.TrimSpace(want)] {
				return false
			}
		}
		return true
	case "set_contains_any":
		have := splitSet(l)
		for _, want := range strings.Split(r, ",") {
			if have[strings.TrimSpace(want)] {
				return true
			}
		}
		return false
	case "version", "semver":
		terms, ok := ck.versions[r]
		if !ok {
			terms = parseVersionConstraint(r)
			ck.versions[r] = terms
		}
		return matchVersion(l, terms)
	}
	return false
}

func splitSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		out[strings.TrimSpace(v)] = true
	}
	return out
}

// compareOrder compares numerically when both sides are numbers, else
// lexically.
func compareOrder(op, l, r string) bool {
	var c int
	lf, lerr := strconv.ParseFloat(l, 64)
	rf, rerr := strconv.ParseFloat(r, 64)
	switch {
	case lerr == nil && rerr == nil:
		switch {
		case lf < rf:
			c = -1
		case lf > rf:
			c = 1
		}
	default:
		c = strings.Compare(l, r)
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

type versionTerm struct {
	op string
	v  []int
}

// parseVersionConstraint parses "op version" terms separated by commas
// (">= 1.2, < 2.0"); a term that does not parse never matches.
func parseVersionConstraint(s string) []versionTerm {
	var terms []versionTerm
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		op := "="
		for _, o := range []string{">=", "<=", "!=", "~>", ">", "<", "="} {
			if strings.HasPrefix(t, o) {
				op, t = o, strings.TrimSpace(t[len(o):])
				break
			}
		}
		v, ok := parseVersion(t)
		if !ok {
			return []versionTerm{{op: "invalid"}}
		}
		terms = append(terms, versionTerm{op: op, v: v})
	}
	return terms
}

func parseVersion(s string) ([]int, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return nil, false
	}
	parts := strings.Split(s, ".")
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

func compareVersion(a, b []int) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func matchVersion(s string, terms []versionTerm) bool {
	v, ok := parseVersion(s)
	if !ok || len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		c := compareVersion(v, t.v)
		var ok bool
		switch t.op {
		case "=":
			ok = c == 0
		case "!=":
			ok = c != 0
		case ">":
			ok = c > 0
		case ">=":
			ok = c >= 0
		case "<":
			ok = c < 0
		case "<=":
			ok = c <= 0
		case "~>":
			// Pessimistic: >= t.v and below the next release of its
			// second-to-last segment.
			upper := append([]int(nil), t.v...)
			if len(upper) > 1 {
				upper = upper[:len(upper)-1]
			}
			upper[len(upper)-1]++
			ok = c >= 0 && compareVersion(v, upper) < 0
		}
		if !ok {
			return false
		}
	}
	return true
}

// driverOK reports whether the node runs a task's driver: detected and
// healthy, or advertised by a driver.<name> attribute when the node
// reports no driver info for it.
func driverOK(n *Node, driver string) bool {
	if d, ok := n.Drivers[driver]; ok {
		return d.Detected && d.Healthy
	}
	v := n.Attributes["driver."+driver]
	return v == "1" || v == "true"
}

// feasible reports whether node n can ever run group tg of job (ignoring
// resources and distinct_hosts); when not, it names the reason.
func (ck *checker) feasible(job *events.Job, tg *events.TaskGroup, n *Node) (bool, string) {
	for i := range tg.Tasks {
		if d := tg.Tasks[i].Driver; d != "" && !driverOK(n, d) {
			return false, reasonMissingDrivers
		}
	}
	for _, c := range job.Constraints {
		if !ck.check(c, n) {
			return false, constraintString(c)
		}
	}
	for _, c := range tg.Constraints {
		if !ck.check(c, n) {
			return false, constraintString(c)
		}
	}
	if ok, why := hostVolumesOK(tg, n); !ok {
		return false, why
	}
	if ok, why := hostNetworksOK(tg, n); !ok { // ports.go
		return false, why
	}
	return true, ""
}

// hostVolumesOK reports whether node n offers every host volume group tg
// asks for, writable where the request is not read-only; when not, the
// reason names the first volume (by request name) that is missing.
func hostVolumesOK(tg *events.TaskGroup, n *Node) (bool, string) {
	if len(tg.Volumes) == 0 {
		return true, ""
	}
	names := make([]string, 0, len(tg.Volumes))
	for name, req := range tg.Volumes {
		if req != nil && req.Type == events.VolumeTypeHost {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		req := tg.Volumes[name]
		hv, ok := n.HostVolumes[req.Source]
		switch {
		case !ok || hv == nil:
			return false, "missing host volume " + req.Source
		case hv.ReadOnly && !req.ReadOnly:
			return false, "host volume " + req.Source + " is read-only"
		}
	}
	return true, ""
}

// distinctHosts reports whether the job (jobLevel) or the group asks for
// distinct hosts.
func distinctHosts(job *events.Job, tg *events.TaskGroup) (jobLevel, groupLevel bool) {
	for _, c := range job.Constraints {
		if c.Operand == events.ConstraintDistinctHosts && c.RTarget != "false" {
			jobLevel = true
		}
	}
	for _, c := range tg.Constraints {
		if c.Operand == events.ConstraintDistinctHosts && c.RTarget != "false" {
			groupLevel = true
		}
	}
	return
}
