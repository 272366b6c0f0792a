package acl

import (
	"strconv"
	"strings"
	"sync"

	"github.com/ordoplane/ordo/commands/acl/policy"
	acls "github.com/ordoplane/ordo/projections/acl"
)

// policyCacheMax bounds each map of a policyCache; it is emptied when full.
const policyCacheMax = 4096

// policyCache keeps parsed policies by (name, modify index), and compiled
// ACLs by the list of (name, modify index) they were compiled from. A
// policy's modify index changes with every update, so an entry never goes
// stale: a token resolved after an ACL change re-parses only the policies
// that changed, and tokens linking the same policies share one ACL.
// Entries of replaced policies stay until the cache is full and emptied.
type policyCache struct {
	mu struct {
		sync.Mutex
		parsed   map[policyKey]*policy.Policy
		compiled map[string]*policy.ACL
	}
}

type policyKey struct {
	name  string
	index uint64
}

func newPolicyCache() *policyCache {
	c := &policyCache{}
	c.mu.parsed = map[policyKey]*policy.Policy{}
	c.mu.compiled = map[string]*policy.ACL{}
	return c
}

// compile returns the ACL of pols, parsing only the policies it has not
// seen at their modify index. A policy that does not parse is returned as
// its error, with its name.
func (c *policyCache) compile(pols []*acls.Policy) (*policy.ACL, error) {
	var key strings.Builder
	for _, p := range pols {
		key.WriteString(p.Name)
		key.WriteByte(0)
		key.WriteString(strconv.FormatUint(p.ModifyIndex, 10))
		key.WriteByte(0)
	}
	k := key.String()
	c.mu.Lock()
	acl, ok := c.mu.compiled[k]
	c.mu.Unlock()
	if ok {
		return acl, nil
	}
	parsed := make([]*policy.Policy, 0, len(pols))
	for _, p := range pols {
		pp, err := c.parse(p)
		if err != nil {
			return nil, &parseError{name: p.Name, err: err}
		}
		parsed = append(parsed, pp)
	}
	acl = policy.Compile(parsed)
	c.mu.Lock()
	if len(c.mu.compiled) >= policyCacheMax {
		clear(c.mu.compiled)
	}
	c.mu.compiled[k] = acl
	c.mu.Unlock()
	return acl, nil
}

// parse returns p's rules parsed, from the cache when p is there at its
// modify index.
func (c *policyCache) parse(p *acls.Policy) (*policy.Policy, error) {
	k := policyKey{p.Name, p.ModifyIndex}
	c.mu.Lock()
	pp, ok := c.mu.parsed[k]
	c.mu.Unlock()
	if ok {
		return pp, nil
	}
	pp, err := policy.Parse(p.Rules)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.mu.parsed) >= policyCacheMax {
		clear(c.mu.parsed)
	}
	c.mu.parsed[k] = pp
	c.mu.Unlock()
	return pp, nil
}

// parseError is a stored policy whose rules do not parse.
type parseError struct {
	name string
	err  error
}

func (e *parseError) Error() string { return "policy " + strconv.Quote(e.name) + ": " + e.err.Error() }
func (e *parseError) Unwrap() error { return e.err }
