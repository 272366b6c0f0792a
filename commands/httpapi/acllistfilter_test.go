package httpapi_test

import (
	"net/url"
	"reflect"
	"sort"
	"testing"
)

// aclListAgent starts an agent with ACLs on and returns it with the
// management token's secret, two policies (readers, writers), two roles
// (ops, dev) and two client tokens (alice, bob).
func aclListAgent(t *testing.T) (*aclAgent, string) {
	t.Helper()
	g := startACLAgent(t)
	var boot tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &boot)
	mgmt := boot.SecretID
	g.policy(t, mgmt, "readers", `namespace "default" { policy = "read" }`)
	g.policy(t, mgmt, "writers", `namespace "default" { policy = "write" }`)
	for _, r := range []struct{ name, policy string }{{"ops", "writers"}, {"dev", "readers"}} {
		body := map[string]any{"Name": r.name, "Description": "role " + r.name, "Policies": []map[string]string{{"Name": r.policy}}}
		if st := g.call(t, "POST", "/v1/acl/role", mgmt, body); st != 200 {
			t.Fatalf("role %s: %d", r.name, st)
		}
	}
	g.token(t, mgmt, "alice", "readers")
	g.token(t, mgmt, "bob", "writers")
	return g, mgmt
}

// listNames lists path with ?filter=filter and returns the items' field,
// sorted; a status other than 200 is returned as is.
func listNames(t *testing.T, g *aclAgent, mgmt, path, field, filter string) ([]string, int) {
	t.Helper()
	var list []map[string]any
	st := g.call(t, "GET", path+"?filter="+url.QueryEscape(filter), mgmt, nil)
	if st != 200 {
		return nil, st
	}
	g.call(t, "GET", path+"?filter="+url.QueryEscape(filter), mgmt, nil, &list)
	out := []string{}
	for _, it := range list {
		s, _ := it[field].(string)
		out = append(out, s)
	}
	sort.Strings(out)
	return out, st
}

// checkListFilter: filter selects want; a filter that selects nothing
// answers []; a bad one is a 400 (naming filter: the matrix of bad
// parameters checks the body's field).
func checkListFilter(t *testing.T, g *aclAgent, mgmt, path, field, filter string, want []string) {
	t.Helper()
	if got, st := listNames(t, g, mgmt, path, field, filter); st != 200 || !reflect.DeepEqual(got, want) {
		t.Fatalf("GET %s?filter=%s = %d %v, want %v", path, filter, st, got, want)
	}
	if got, st := listNames(t, g, mgmt, path, field, field+` == "no-such-thing"`); st != 200 || len(got) != 0 {
		t.Fatalf("GET %s with a filter selecting nothing = %d %v, want []", path, st, got)
	}
	if _, st := listNames(t, g, mgmt, path, field, field+` ==`); st != 400 {
		t.Fatalf("GET %s with a bad filter = %d, want 400", path, st)
	}
}

// GET /v1/acl/policies?filter= selects on the policy stubs' JSON.
func TestACLPolicyListFilter(t *testing.T) {
	t.Parallel()
	g, mgmt := aclListAgent(t)
	checkListFilter(t, g, mgmt, "/v1/acl/policies", "Name", `Name == "writers"`, []string{"writers"})
}

// GET /v1/acl/tokens?filter= selects on the token stubs' JSON; the
// secret is not in them, so a filter cannot probe for it.
func TestACLTokenListFilter(t *testing.T) {
	t.Parallel()
	g, mgmt := aclListAgent(t)
	checkListFilter(t, g, mgmt, "/v1/acl/tokens", "Name", `Type == "client" and "readers" in Policies`, []string{"alice"})
	if got, st := listNames(t, g, mgmt, "/v1/acl/tokens", "Name", `SecretID == "`+mgmt+`"`); st != 200 || len(got) != 0 {
		t.Fatalf("a filter on the management secret selected %v (%d)", got, st)
	}
}

// GET /v1/acl/roles?filter= selects on the roles' JSON.
func TestACLRoleListFilter(t *testing.T) {
	t.Parallel()
	g, mgmt := aclListAgent(t)
	checkListFilter(t, g, mgmt, "/v1/acl/roles", "Name", `Description == "role dev"`, []string{"dev"})
}
