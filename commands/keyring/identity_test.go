package keyring_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
)

// TestWorkloadIdentity: an allocation's JWT carries Nomad's claims and
// kid = the root key that signed it, verifies through the JWKS alone
// (public keys from the log), and VerifyIdentity accepts it while the
// allocation is live and refuses it after.
func TestWorkloadIdentity(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	kid, _ := h.kr.Initialize(ctx)
	job := eventstest.SampleJob() // payments/web, group api, task server
	alloc := events.Allocation{ID: "a1", Namespace: job.Namespace, JobID: job.ID, TaskGroup: "api", NodeID: "n1",
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning, SigningKeyID: kid,
		CreateTime: h.now.Add(-time.Minute).UnixNano()}
	if err := h.run(t, rawEvents{&events.JobRegistered{Job: job}, &events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{alloc}}}); err != nil {
		t.Fatal(err)
	}
	tok, gotKid, err := h.kr.SignIdentity("a1", "server")
	if err != nil || gotKid != kid {
		t.Fatalf("SignIdentity = %s, %v", gotKid, err)
	}
	again, _, _ := h.kr.SignIdentity("a1", "server")
	if again != tok {
		t.Fatal("signing is not deterministic")
	}
	if _, _, err := h.kr.SignIdentity("a1", "nope"); commands.Status(err) != 400 {
		t.Fatalf("unknown task: %v", err)
	}
	if _, _, err := h.kr.SignIdentity("nope", "server"); commands.Status(err) != 404 {
		t.Fatalf("unknown alloc: %v", err)
	}

	// Verify with nothing but the JWKS, as an outside party would.
	set, err := h.kr.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(set)
	if strings.Contains(string(b), `"d"`) {
		t.Fatalf("JWKS carries a private key: %s", b)
	}
	var pub jose.JSONWebKeySet
	if err := json.Unmarshal(b, &pub); err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Headers[0].KeyID != kid {
		t.Fatalf("kid %q, want %q", parsed.Headers[0].KeyID, kid)
	}
	keys := pub.Key(kid)
	if len(keys) != 1 {
		t.Fatalf("JWKS has %d keys for %s", len(keys), kid)
	}
	var claims map[string]any
	if err := parsed.Claims(keys[0].Key, &claims); err != nil {
		t.Fatalf("verify through JWKS: %v", err)
	}
	for k, want := range map[string]any{"nomad_namespace": "payments", "nomad_job_id": "web", "nomad_allocation_id": "a1",
		"nomad_task_group": "api", "nomad_task": "server", "iat": float64(h.now.Add(-time.Minute).Unix()),
		"nbf": float64(h.now.Add(-time.Minute).Unix())} {
		if claims[k] != want {
			t.Errorf("claim %s = %v, want %v", k, claims[k], want)
		}
	}

	ns, jobID, group, task, ok, err := h.kr.VerifyIdentity(tok)
	if err != nil || !ok || ns != "payments" || jobID != "web" || group != "api" || task != "server" {
		t.Fatalf("VerifyIdentity = %s %s %s %s %v %v", ns, jobID, group, task, ok, err)
	}
	// Tampered: refused.
	// A character in the middle of the signature changes: every one of its
	// six bits is significant there (the last character's low bits are not).
	sig := strings.LastIndexByte(tok, '.') + 10
	swap := byte('A')
	if tok[sig] == 'A' {
		swap = 'B'
	}
	bad := tok[:sig] + string(swap) + tok[sig+1:]
	if _, _, _, _, ok, _ := h.kr.VerifyIdentity(bad); ok {
		t.Fatal("a tampered token verified")
	}
	if _, _, _, _, ok, err := h.kr.VerifyIdentity("not a jwt"); ok || err == nil {
		t.Fatal("garbage verified")
	}
	// The allocation stops: its identity no longer verifies.
	if err := h.run(t, rawEvents{&events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{{ID: "a1", DesiredStatus: events.AllocDesiredStop}}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, ok, _ := h.kr.VerifyIdentity(tok); ok {
		t.Fatal("the identity of a stopped allocation verified")
	}
}
