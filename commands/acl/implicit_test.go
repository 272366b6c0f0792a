package acl_test

import (
	"testing"

	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/commands/acl/policy"
)

// A workload identity reads its job's variables under nomad/jobs without
// any policy attached, as in Nomad — its own job's, group's and task's
// paths, in its namespace — and nothing else.
func TestWorkloadImplicitVariables(t *testing.T) {
	h := newHarness(t)
	r, err := acl.NewResolver(acl.ResolverConfig{Store: h.store, Applied: h.fsm.Applied,
		Verifier: fakeVerifier{"h.p.s": {"default", "web", "api", "server"}, "h.q.s": {"default", `we"b${x}`, "g", "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	wl, err := r.Resolve("h.p.s")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ns, path, op string
		want         bool
	}{
		{"default", "nomad/jobs/web", policy.VarRead, true},
		{"default", "nomad/jobs/web/api", policy.VarRead, true},
		{"default", "nomad/jobs/web/api/server", policy.VarRead, true},
		{"default", "nomad/jobs", policy.VarList, true},
		{"default", "nomad/jobs/web", policy.VarWrite, false},
		{"default", "nomad/jobs/web/db", policy.VarRead, false},
		{"default", "nomad/jobs/other", policy.VarRead, false},
		{"default", "web/db", policy.VarRead, false},
		{"prod", "nomad/jobs/web", policy.VarRead, false},
	} {
		if got := wl.ACL.AllowVariable(c.ns, c.path, c.op); got != c.want {
			t.Errorf("%s %s/%s = %v, want %v", c.op, c.ns, c.path, got, c.want)
		}
	}
	// A job whose name HCL would read as a template still resolves.
	odd, err := r.Resolve("h.q.s")
	if err != nil || !odd.ACL.AllowVariable("default", `nomad/jobs/we"b${x}`, policy.VarRead) {
		t.Fatalf("odd job name: %v", err)
	}
}
