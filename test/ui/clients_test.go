package ui

import (
	"strconv"
	"testing"

	"github.com/ordoplane/ordo/test/testagent"
)

// The clients page lists the dev node; its page shows its allocation, and
// marking it ineligible from the page (then eligible again) changes it, as
// draining it and stopping the drain do.
func TestClientPageEligibility(t *testing.T) {
	s := start(t)
	alloc := runningAlloc(t, s, echoJob("echo"))
	before := lastIndex(t, s)

	s.open("/clients")
	s.waitText("main table", s.node[:8])
	s.waitText("main table", "eligible")
	s.shot("clients")
	s.checkA11y("clients")

	s.click("main table a", s.node[:8])
	s.waitText("main dl", s.node)
	s.waitText("main table[aria-label=allocations]", alloc.ID[:8])
	s.waitText("main table[aria-label=drivers]", "exec")
	s.shot("client")
	s.checkA11y("client")

	eligibility := func() string {
		n, _, err := s.api.Nodes().Info(s.node, nil)
		if err != nil {
			return ""
		}
		return n.SchedulingEligibility
	}
	s.click("main .write button", "Mark ineligible")
	testagent.WaitFor(t, testagent.ServerTimeout, "the node ineligible", func() bool { return eligibility() == "ineligible" })
	s.waitText("main .write button", "Mark eligible") // the page follows live
	s.click("main .write button", "Mark eligible")
	testagent.WaitFor(t, testagent.ServerTimeout, "the node eligible", func() bool { return eligibility() == "eligible" })
	s.waitText("main .write button", "Mark ineligible")

	// Drain (its confirmation accepted) and stop draining.
	draining := func() bool {
		n, _, err := s.api.Nodes().Info(s.node, nil)
		return err == nil && n.DrainStrategy != nil
	}
	if err := s.eval(`window.confirm = () => true`, nil); err != nil {
		t.Fatal(err)
	}
	s.fill("main .toolbar input[type=text]", "2h")
	s.click("main .write button", "Drain")
	testagent.WaitFor(t, testagent.ServerTimeout, "the node draining", draining)
	s.waitText("main dl", "yes, deadline 2h")
	s.click("main .write button", "Stop drain")
	testagent.WaitFor(t, testagent.ServerTimeout, "the drain stopped", func() bool { return !draining() })
	s.waitText("main .write button", "Drain")

	// In the past the page reads the node as it stood, writes disabled.
	s.open("/clients/" + s.node + "?at_index=" + strconv.FormatUint(before, 10))
	s.waitText("main dl", "eligible")
	s.waitText(".timebar .banner", "As of index")
	var disabled bool
	if err := s.eval(`[...document.querySelectorAll('main .write button')].every(b => b.disabled)`, &disabled); err != nil || !disabled {
		t.Fatalf("writes enabled in the past (err %v)", err)
	}
}
