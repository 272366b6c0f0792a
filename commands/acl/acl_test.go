package acl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	acls "github.com/ordoplane/ordo/projections/acl"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

// harness is a pipeline over an FSM without raft, with a settable clock.
type harness struct {
	store *kv.Store
	fsm   *fsm.FSM
	p     *commands.Pipeline
	clock *clocktest.Clock
	n     atomic.Int64
}

func newHarness(t testing.TB) *harness {
	h := &harness{store: pt.OpenStore(t)}
	h.fsm = pt.NewFSM(t, h.store)
	h.clock = clocktest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: h.fsm}, Store: h.store, Applied: h.fsm.Applied,
		Clock:  h.clock,
		IDs:    func() string { return fmt.Sprintf("id-%03d", h.n.Add(1)) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	h.p = p
	return h
}

func (h *harness) run(t testing.TB, c commands.Command) error {
	t.Helper()
	_, err := h.p.Run(context.Background(), "test", commands.Request{Actor: "tester"}, c)
	return err
}

func (h *harness) must(t testing.TB, c commands.Command) {
	t.Helper()
	if err := h.run(t, c); err != nil {
		t.Fatalf("%T: %v", c, err)
	}
}

func (h *harness) view(t testing.TB) projections.View {
	snap := h.store.Snapshot()
	t.Cleanup(func() { snap.Close() })
	return projections.NewView(snap)
}

func token(accessor, secret string, roles ...acl.RoleLink) *acl.UpsertToken {
	return &acl.UpsertToken{Create: true, AccessorID: accessor, SecretHash: acl.HashSecret(secret),
		Type: events.ACLTokenClient, Roles: roles}
}

// TestRoleLinks (N8): links given by name or id are stored as ids with
// repeats removed; a missing role is refused at creation; a role deleted
// later disappears from the token.
func TestRoleLinks(t *testing.T) {
	h := newHarness(t)
	h.must(t, acl.ApplyPolicy{Name: "read", Rules: `namespace "default" { policy = "read" }`})
	ops := &acl.UpsertRole{Name: "ops", Policies: []string{"read", "read"}}
	h.must(t, ops)
	dev := &acl.UpsertRole{Name: "dev", Policies: []string{"read"}}
	h.must(t, dev)
	if err := h.run(t, &acl.UpsertRole{Name: "ops", Policies: []string{"read"}}); err == nil {
		t.Fatal("a second role named ops was created")
	}
	commandstest.WantField(t, h.run(t, &acl.UpsertRole{Name: "x", Policies: []string{"nope"}}), "Policies")

	tk := token("a1", "s1", acl.RoleLink{Name: "ops"}, acl.RoleLink{ID: ops.Result()}, acl.RoleLink{Name: "dev"}, acl.RoleLink{ID: dev.Result()})
	h.must(t, tk)
	if got := tk.Result().Roles; !reflect.DeepEqual(got, []string{ops.Result(), dev.Result()}) {
		t.Fatalf("stored links = %v, want the two ids once each", got)
	}
	commandstest.WantField(t, h.run(t, token("a2", "s2", acl.RoleLink{Name: "ghost"})), "Roles")
	commandstest.WantField(t, h.run(t, token("a3", "s3", acl.RoleLink{ID: "no-such-id"})), "Roles")
	if r, _ := acls.GetRole(h.view(t), ops.Result()); !reflect.DeepEqual(r.Policies, []string{"read"}) {
		t.Fatalf("role policies = %v, want deduplicated", r.Policies)
	}
	h.must(t, acl.DeleteRole{ID: dev.Result()})
	got, err := acls.GetToken(h.view(t), "a1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Roles, []string{ops.Result()}) {
		t.Fatalf("after deleting dev, links = %v", got.Roles)
	}
}

// TestBootstrapOnceAndReset: bootstrap succeeds once; again only with the
// reset index it names (the index of the last bootstrap).
func TestBootstrapOnceAndReset(t *testing.T) {
	h := newHarness(t)
	h.must(t, acl.Bootstrap{AccessorID: "boot1", SecretHash: acl.HashSecret("s1")})
	idx, _, _ := acls.Bootstrap(h.view(t))
	err := h.run(t, acl.Bootstrap{AccessorID: "boot2", SecretHash: acl.HashSecret("s2")})
	commandstest.WantField(t, err, "ResetIndex")
	if want := fmt.Sprintf("reset index: %d", idx); !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %q does not name %q", err, want)
	}
	commandstest.WantField(t, h.run(t, acl.Bootstrap{AccessorID: "boot2", SecretHash: acl.HashSecret("s2"), ResetIndex: idx + 7}), "ResetIndex")
	h.must(t, acl.Bootstrap{AccessorID: "boot2", SecretHash: acl.HashSecret("s2"), ResetIndex: idx})
	// The same reset index does not work twice.
	commandstest.WantField(t, h.run(t, acl.Bootstrap{AccessorID: "boot3", SecretHash: acl.HashSecret("s3"), ResetIndex: idx}), "ResetIndex")
	tk, err := acls.TokenBySecretHash(h.view(t), acl.HashSecret("s2"))
	if err != nil || tk.Type != events.ACLTokenManagement {
		t.Fatalf("bootstrap token = %+v, %v", tk, err)
	}
}

// TestExpiryFromLeaderTime (N10): the expiry is the leader's time plus the
// TTL, and ExpireTokens deletes what expired at the leader's time, whatever
// the resolving server's clock says.
func TestExpiryFromLeaderTime(t *testing.T) {
	h := newHarness(t)
	h.must(t, acl.ApplyPolicy{Name: "read", Rules: `namespace "default" { policy = "read" }`})
	start := h.clock.Now().UnixNano()
	tk := token("a1", "s1")
	tk.Policies, tk.ExpirationTTL = []string{"read"}, time.Hour
	h.must(t, tk)
	if got := tk.Result().ExpirationTime; got != start+int64(time.Hour) {
		t.Fatalf("ExpirationTime = %d, want leader time + 1h", got)
	}
	h.clock.Advance(30 * time.Minute)
	exp := &acl.ExpireTokens{}
	h.must(t, exp)
	if exp.Result() != 0 {
		t.Fatal("a token was expired early")
	}
	h.clock.Advance(31 * time.Minute)
	exp = &acl.ExpireTokens{}
	h.must(t, exp)
	if exp.Result() != 1 {
		t.Fatalf("expired %d tokens, want 1", exp.Result())
	}
	if _, err := acls.GetToken(h.view(t), "a1"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("expired token still present: %v", err)
	}
	bad := token("a2", "s2")
	bad.Policies, bad.ExpirationTime = []string{"read"}, h.clock.Now().Add(-1)
	commandstest.WantField(t, h.run(t, bad), "ExpirationTime")
	bad = token("a3", "s3")
	bad.Policies, bad.ExpirationTTL, bad.MaxTTL = []string{"read"}, 48*time.Hour, 24*time.Hour
	commandstest.WantField(t, h.run(t, bad), "ExpirationTTL")
}

type fakeVerifier map[string][4]string

func (f fakeVerifier) Verify(tok string) (string, string, string, string, bool, error) {
	w, ok := f[tok]
	if !ok {
		return "", "", "", "", true, errors.New("bad signature")
	}
	return w[0], w[1], w[2], w[3], true, nil
}

// TestResolver: tokens resolve to their policies and roles' policies; the
// cache is invalidated when a policy changes; anonymous gets the anonymous
// policy; a workload identity gets the policies attached to it (N7).
func TestResolver(t *testing.T) {
	h := newHarness(t)
	h.must(t, acl.ApplyPolicy{Name: "read", Rules: `namespace "default" { policy = "read" }`})
	h.must(t, acl.ApplyPolicy{Name: "web-vars", Rules: "namespace \"default\" {\n variables {\n path \"web/*\" { capabilities = [\"read\"] }\n }\n}",
		JobACL: &events.ACLWorkload{Namespace: "default", JobID: "web", Group: "api"}})
	role := &acl.UpsertRole{Name: "readers", Policies: []string{"read"}}
	h.must(t, role)
	tk := token("a1", "secret-1", acl.RoleLink{Name: "readers"})
	h.must(t, tk)
	r, err := acl.NewResolver(acl.ResolverConfig{Store: h.store, Applied: h.fsm.Applied,
		Verifier: fakeVerifier{"h.p.s": {"default", "web", "api", "server"}, "h.q.s": {"default", "web", "db", "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := r.Resolve("secret-1")
	if err != nil || id.Actor() != "a1" || !id.ACL.AllowNamespace("default", policy.CapReadJob) || id.ACL.AllowNamespace("default", policy.CapSubmitJob) {
		t.Fatalf("Resolve = %+v, %v", id, err)
	}
	if _, err := r.Resolve("wrong"); !errors.Is(err, acl.ErrTokenNotFound) || commands.Status(err) != 403 {
		t.Fatalf("unknown secret: %v", err)
	}
	anon, err := r.Resolve("")
	if err != nil || anon.ACL.AllowNamespace("default", policy.CapReadJob) || anon.Actor() != acl.AnonymousActor {
		t.Fatalf("anonymous without a policy: %+v %v", anon, err)
	}
	// Changing a policy invalidates the cache: the next resolve sees it.
	h.must(t, acl.ApplyPolicy{Name: "read", Rules: `namespace "default" { policy = "write" }`})
	h.must(t, acl.ApplyPolicy{Name: acl.AnonymousPolicy, Rules: `namespace "default" { policy = "read" }`})
	if id, _ := r.Resolve("secret-1"); !id.ACL.AllowNamespace("default", policy.CapSubmitJob) {
		t.Fatal("a changed policy was not seen")
	}
	if anon, _ := r.Resolve(""); !anon.ACL.AllowNamespace("default", policy.CapReadJob) {
		t.Fatal("the anonymous policy was not applied")
	}
	wl, err := r.Resolve("h.p.s")
	if err != nil || !wl.ACL.AllowVariable("default", "web/db", policy.VarRead) || wl.Actor() != "workload:default/web/api/server" {
		t.Fatalf("workload = %+v, %v", wl, err)
	}
	if other, err := r.Resolve("h.q.s"); err != nil || other.ACL.AllowVariable("default", "web/db", policy.VarRead) {
		t.Fatalf("a policy attached to group api reached group db: %v", err)
	}
	if _, err := r.Resolve("x.y.z"); commands.Status(err) != 403 {
		t.Fatalf("a workload identity that does not verify: %v", err)
	}
	// Expired but not yet reaped: refused by the resolver.
	exp := token("a9", "secret-9")
	exp.Policies, exp.ExpirationTTL = []string{"read"}, time.Minute
	h.must(t, exp)
	r2, _ := acl.NewResolver(acl.ResolverConfig{Store: h.store, Applied: h.fsm.Applied,
		Clock: clocktest.NewClock(h.clock.Now().Add(2 * time.Minute))})
	if _, err := r2.Resolve("secret-9"); !errors.Is(err, acl.ErrTokenExpired) {
		t.Fatalf("expired token: %v", err)
	}
}

// BenchmarkResolve measures token resolution per request with the cache
// warm (the steady state) and cold (every request reads the tables).
func BenchmarkResolve(b *testing.B) {
	h := newHarness(b)
	h.must(b, acl.ApplyPolicy{Name: "p1", Rules: "namespace \"default\" {\n policy = \"write\"\n variables {\n path \"a/*\" { capabilities = [\"read\"] }\n }\n}\nnode { policy = \"read\" }"})
	h.must(b, acl.ApplyPolicy{Name: "p2", Rules: `namespace "prod-*" { policy = "read" }`})
	role := &acl.UpsertRole{Name: "r", Policies: []string{"p2"}}
	h.must(b, role)
	tk := token("a1", "secret-1", acl.RoleLink{Name: "r"})
	tk.Policies = []string{"p1"}
	h.must(b, tk)
	b.Run("cached", func(b *testing.B) {
		r, _ := acl.NewResolver(acl.ResolverConfig{Store: h.store, Applied: h.fsm.Applied})
		b.ReportAllocs()
		for b.Loop() {
			id, err := r.Resolve("secret-1")
			if err != nil || !id.ACL.AllowNamespace("prod-eu", policy.CapReadJob) {
				b.Fatal(err)
			}
		}
	})
	// uncached: the token is read again every time (roles, policies);
	// the policies come parsed and compiled from the policy cache, since
	// their modify indexes did not move.
	b.Run("uncached", func(b *testing.B) {
		r, _ := acl.NewResolver(acl.ResolverConfig{Store: h.store, Applied: h.fsm.Applied, MaxEntries: 1, MaxAge: time.Nanosecond})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Resolve("secret-1"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
