package acl_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/acl"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
)

const rules = `namespace "default" { policy = "read" }`

func names(ps []*acl.Policy) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// TestWorkloadIndex (N7): policies attached to a workload are found by
// (namespace, job) and narrowed by group and task; moving or deleting a
// policy moves or removes its index row.
func TestWorkloadIndex(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	w := func(ns, job, group, task string) *events.ACLWorkload {
		return &events.ACLWorkload{Namespace: ns, JobID: job, Group: group, Task: task}
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1",
		&events.ACLPolicyUpserted{Name: "job-wide", Rules: rules, JobACL: w("default", "web", "", "")},
		&events.ACLPolicyUpserted{Name: "api-only", Rules: rules, JobACL: w("default", "web", "api", "")},
		&events.ACLPolicyUpserted{Name: "api-server", Rules: rules, JobACL: w("default", "web", "api", "server")},
		&events.ACLPolicyUpserted{Name: "other-job", Rules: rules, JobACL: w("default", "webx", "", "")},
		&events.ACLPolicyUpserted{Name: "other-ns", Rules: rules, JobACL: w("prod", "web", "", "")},
		&events.ACLPolicyUpserted{Name: "plain", Rules: rules}))
	get := func(ns, job, group, task string) []string {
		t.Helper()
		ps, err := acl.WorkloadPolicies(v, ns, job, group, task)
		if err != nil {
			t.Fatal(err)
		}
		return names(ps)
	}
	if got, want := get("default", "web", "api", "server"), []string{"api-only", "api-server", "job-wide"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("api/server: %v, want %v", got, want)
	}
	if got, want := get("default", "web", "api", "sidecar"), []string{"api-only", "job-wide"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("api/sidecar: %v, want %v", got, want)
	}
	if got, want := get("default", "web", "db", "x"), []string{"job-wide"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("db: %v, want %v", got, want)
	}
	if got := get("default", "we", "", ""); got != nil {
		t.Fatalf("a job-id prefix matched: %v", got)
	}
	// Re-attaching moves the index row; deleting removes it.
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.ACLPolicyUpserted{Name: "job-wide", Rules: rules, JobACL: w("prod", "web", "", "")}))
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.ACLPolicyDeleted{Name: "api-only"}))
	if got, want := get("default", "web", "api", "server"), []string{"api-server"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after move and delete: %v, want %v", got, want)
	}
	if got, want := get("prod", "web", "", ""), []string{"job-wide", "other-ns"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("prod/web: %v, want %v", got, want)
	}
	checkRebuild(t, store)
}

// TestTokenDropsDeletedRoles (N8): reading a token drops links to roles
// deleted since it was written; role names index follows renames.
func TestTokenDropsDeletedRoles(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1",
		&events.ACLRoleUpserted{ID: "r1", Name: "ops", Policies: []string{"p"}},
		&events.ACLRoleUpserted{ID: "r2", Name: "dev", Policies: []string{"p"}},
		&events.ACLTokenUpserted{AccessorID: "a1", SecretHash: "h1", Type: events.ACLTokenClient, Roles: []string{"r1", "r2"}}))
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.ACLRoleDeleted{ID: "r1"},
		&events.ACLRoleUpserted{ID: "r2", Name: "developers", Policies: []string{"p"}}))
	tok, err := acl.TokenBySecretHash(v, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tok.Roles, []string{"r2"}) {
		t.Fatalf("roles = %v, want [r2]", tok.Roles)
	}
	if _, err := acl.RoleByName(v, "dev"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("old role name still indexed: %v", err)
	}
	if r, err := acl.RoleByName(v, "developers"); err != nil || r.ID != "r2" {
		t.Fatalf("RoleByName(developers) = %v, %v", r, err)
	}
	checkRebuild(t, store)
}

// TestExpiryUsesEntryTime (N10): an expiry deletion removes only the
// listed tokens expired at the entry's leader time, so servers whose own
// clocks disagree apply it identically, and a token extended after the
// decision survives.
func TestExpiryUsesEntryTime(t *testing.T) {
	at := pt.LeaderTime
	tokens := pt.Entry(t, "c1",
		&events.ACLTokenUpserted{AccessorID: "old", SecretHash: "h-old", Type: events.ACLTokenManagement, ExpirationTime: at - 1},
		&events.ACLTokenUpserted{AccessorID: "edge", SecretHash: "h-edge", Type: events.ACLTokenManagement, ExpirationTime: at},
		&events.ACLTokenUpserted{AccessorID: "later", SecretHash: "h-later", Type: events.ACLTokenManagement, ExpirationTime: at + 1},
		&events.ACLTokenUpserted{AccessorID: "never", SecretHash: "h-never", Type: events.ACLTokenManagement})
	// A leader whose clock ran ahead listed every token.
	expire := pt.Entry(t, "c2", &events.ACLTokensDeleted{AccessorIDs: []string{"old", "edge", "later", "never"}, Expired: true})
	var sums []map[string][32]byte
	for range 2 { // two servers: the apply reads no clock, so they agree
		store := pt.OpenStore(t)
		f := pt.NewFSM(t, store)
		pt.ApplyOne(t, f, 1, tokens)
		pt.ApplyOne(t, f, 2, expire)
		list, err := acl.ListTokens(projections.NewView(store), "")
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, tk := range list {
			left = append(left, tk.AccessorID)
		}
		if !reflect.DeepEqual(left, []string{"later", "never"}) {
			t.Fatalf("tokens left = %v, want [later never]", left)
		}
		if ids, _ := acl.ExpiredTokens(projections.NewView(store), at+1, 10); !reflect.DeepEqual(ids, []string{"later"}) {
			t.Fatalf("ExpiredTokens(at+1) = %v", ids)
		}
		if _, err := acl.TokenBySecretHash(projections.NewView(store), "h-old"); !errors.Is(err, projections.ErrNotFound) {
			t.Fatalf("deleted token's secret index remains: %v", err)
		}
		sums = append(sums, pt.Checksums(t, store, []projections.Projection{acl.Projection{}}))
	}
	if !reflect.DeepEqual(sums[0], sums[1]) {
		t.Fatal("two servers applying the same entries differ")
	}
}

func TestBootstrapRow(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	if idx, _, err := acl.Bootstrap(v); err != nil || idx != 0 {
		t.Fatalf("Bootstrap before = %d, %v", idx, err)
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.ACLBootstrapped{AccessorID: "a"}))
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.ACLBootstrapped{AccessorID: "b", ResetIndex: 1}))
	if idx, acc, err := acl.Bootstrap(v); err != nil || idx != 2 || acc != "b" {
		t.Fatalf("Bootstrap = %d %q %v, want 2 b", idx, acc, err)
	}
}

// checkRebuild asserts a rebuild from the archive yields the same tables.
func checkRebuild(t *testing.T, store *kv.Store) {
	t.Helper()
	projs := []projections.Projection{acl.Projection{}}
	dst := pt.OpenStore(t)
	if _, err := rebuild.Rebuild(store, dst, projs, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pt.Checksums(t, dst, projs), pt.Checksums(t, store, projs)) {
		t.Fatal("rebuilt ACL tables differ")
	}
}
