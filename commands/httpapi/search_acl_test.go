package httpapi_test

import (
	"testing"
)

// TestSearchFilteredByACL: a search answers only what the caller's token
// may read, in every namespace it spans; and while the scheduler
// configuration rejects job registrations, a management token still
// registers.
func TestSearchFilteredByACL(t *testing.T) {
	g := startACLAgent(t)
	var boot tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &boot)
	mgmt := boot.SecretID
	if st := g.call(t, "PUT", "/v1/namespace/secret", mgmt, map[string]string{"Name": "secret"}); st != 200 {
		t.Fatalf("namespace: %d", st)
	}
	job := func(ns, id string) map[string]any {
		return map[string]any{"Job": map[string]any{"ID": id, "Name": id, "Namespace": ns, "Type": "batch", "Datacenters": []string{"dc1"},
			"TaskGroups": []any{map[string]any{"Name": "g", "Count": 1, "Tasks": []any{map[string]any{"Name": "t", "Driver": "mock", "Config": map[string]any{}}}}}}}
	}
	// Registration refused for a client token, allowed for management.
	if st := g.call(t, "PUT", "/v1/operator/scheduler/configuration", mgmt, map[string]any{"RejectJobRegistration": true}); st != 200 {
		t.Fatalf("scheduler configuration: %d", st)
	}
	g.policy(t, mgmt, "default-write", `namespace "default" { policy = "write" }`)
	writer := g.token(t, mgmt, "writer", "default-write")
	if st := g.call(t, "PUT", "/v1/jobs", writer.SecretID, job("default", "web-refused")); st != 403 {
		t.Fatalf("registration by a client token while rejected: %d, want 403", st)
	}
	for _, j := range []map[string]any{job("default", "web-public"), job("secret", "web-hidden")} {
		if st := g.call(t, "PUT", "/v1/jobs", mgmt, j); st != 200 {
			t.Fatalf("registration by management while rejected: %d", st)
		}
	}

	g.policy(t, mgmt, "default-read", `namespace "default" { policy = "read" }`)
	reader := g.token(t, mgmt, "reader", "default-read")
	search := func(token string) map[string][]string {
		var res struct{ Matches map[string][]string }
		if st := g.call(t, "PUT", "/v1/search?namespace=*", token, map[string]string{"Prefix": "web", "Context": "all"}, &res); st != 200 {
			t.Fatalf("search: %d", st)
		}
		return res.Matches
	}
	if got := search(mgmt)["jobs"]; len(got) != 2 {
		t.Fatalf("management sees jobs %v, want both", got)
	}
	m := search(reader.SecretID)
	if got := m["jobs"]; len(got) != 1 || got[0] != "web-public" {
		t.Fatalf("a default-only reader sees jobs %v", got)
	}
	if got := m["nodes"]; len(got) != 0 {
		t.Fatalf("a reader without the node rule sees nodes %v", got)
	}
	if got := search("")["jobs"]; len(got) != 0 {
		t.Fatalf("an anonymous caller sees jobs %v", got)
	}
}
