package ui

import (
	"testing"

	napi "github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

// With ACLs on, a token whose policy reads namespace default only, set
// on the ACL tokens page, gets a plain "Not authorized" on a job of
// namespace secret, on the jobs page filtered to that namespace and on
// the timeline (operator:read), and no page throws.
func TestACLDeniedReadsSaySo(t *testing.T) {
	cfg := testagent.DevConfig(t.TempDir())
	cfg.ACL.Enabled = true
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	anon, err := napi.NewClient(&napi.Config{Address: "http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	var boot *napi.ACLToken
	testagent.WaitFor(t, testagent.ServerTimeout, "the ACL bootstrap", func() bool {
		boot, _, err = anon.ACLTokens().Bootstrap(nil)
		return err == nil
	})
	c, err := napi.NewClient(&napi.Config{Address: "http://" + a.HTTPAddr(), SecretID: boot.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Namespaces().Register(&napi.Namespace{Name: "secret"}, nil); err != nil {
		t.Fatal(err)
	}
	job := testagent.SleepJob("service", "hidden", 1, 100)
	job.Namespace = new("secret")
	testagent.Register(t, c, job)
	if _, err := c.ACLPolicies().Upsert(&napi.ACLPolicy{Name: "default-read",
		Rules: `namespace "default" { policy = "read" }`}, nil); err != nil {
		t.Fatal(err)
	}
	tok, _, err := c.ACLTokens().Create(&napi.ACLToken{Name: "reader", Type: "client", Policies: []string{"default-read"}}, nil)
	if err != nil {
		t.Fatal(err)
	}

	s := attach(t, a, c, "")
	s.open("/settings/tokens")
	s.fill("main form.token input", tok.SecretID)
	s.click("main form.token button", "Set token")
	s.waitText("main", "reader") // the token's own name, read with it

	s.open("/jobs/hidden@secret")
	s.waitText("main .error.denied", "Not authorized")
	s.shot("acl-job-denied")
	s.checkA11y("job (denied)")

	s.open("/jobs?namespace=secret")
	s.waitText("main .error.denied", "Not authorized")

	s.open("/timeline")
	s.waitText("main .error.denied", "Not authorized")
	s.shot("acl-timeline-denied")
}
