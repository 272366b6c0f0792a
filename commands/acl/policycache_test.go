package acl

import (
	"testing"

	"github.com/ordoplane/ordo/commands/acl/policy"
	acls "github.com/ordoplane/ordo/projections/acl"
)

// TestPolicyCache: the same policies at the same modify indexes share one
// compiled ACL; a changed policy (a new modify index) is parsed again and
// takes effect while the unchanged one is served parsed; a policy that
// does not parse is an error naming it.
func TestPolicyCache(t *testing.T) {
	c := newPolicyCache()
	p1 := &acls.Policy{Name: "p1", Rules: `namespace "default" { policy = "read" }`, ModifyIndex: 5}
	p2 := &acls.Policy{Name: "p2", Rules: `namespace "prod" { policy = "deny" }`, ModifyIndex: 6}
	a, err := c.compile([]*acls.Policy{p1, p2})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.compile([]*acls.Policy{p1, p2})
	if a != b {
		t.Fatal("the same policies compiled twice")
	}
	if a.AllowNamespace("prod", policy.CapReadJob) || !a.AllowNamespace("default", policy.CapReadJob) {
		t.Fatal("first ACL wrong")
	}
	parsed1 := c.mu.parsed[policyKey{"p1", 5}]
	p2b := &acls.Policy{Name: "p2", Rules: `namespace "prod" { policy = "read" }`, ModifyIndex: 9}
	a2, err := c.compile([]*acls.Policy{p1, p2b})
	if err != nil {
		t.Fatal(err)
	}
	if !a2.AllowNamespace("prod", policy.CapReadJob) {
		t.Fatal("the changed policy did not take effect")
	}
	if c.mu.parsed[policyKey{"p1", 5}] != parsed1 || len(c.mu.parsed) != 3 {
		t.Fatalf("unchanged policy parsed again (%d parsed)", len(c.mu.parsed))
	}
	_, err = c.compile([]*acls.Policy{{Name: "bad", Rules: "namespace {", ModifyIndex: 1}})
	if err == nil || err.Error()[:12] != `policy "bad"` {
		t.Fatalf("err = %v, want one naming the policy", err)
	}
}
