package ui

import (
	"testing"

	"github.com/ordoplane/ordo/test/testagent"
)

// The timeline follows the log: a job registered and then stopped
// through the API shows as JobRegistered and JobDeregistered without a
// reload; a row opens to its payload; ticking only the Node topic
// restarts the stream with it, and no Job event is left.
func TestTimelineFollowsTheLog(t *testing.T) {
	s := start(t)
	s.open("/timeline")
	s.waitText("main .vlist .tl-type", "NodeRegistered")

	testagent.Register(t, s.api, testagent.SleepJob("service", "web", 1, 100))
	s.waitText("main .vlist .tl-type", "JobRegistered")
	if _, _, err := s.api.Jobs().Deregister("web", false, nil); err != nil {
		t.Fatal(err)
	}
	s.waitText("main .vlist .tl-type", "JobDeregistered") // live, no reload
	s.waitText("main .tl-count", "events/s")

	s.click("main .vlist button.tl-toggle", "show the payload of JobDeregistered")
	s.waitText("main .vlist .tl-payload", `"ID": "web"`)
	s.shot("timeline")
	s.checkA11y("timeline")

	s.click("main .topics summary", "Topics")
	s.click("main .topics label", "Node")
	s.waitText("main .topics summary", "Topics: Node")
	s.waitNoText("main .vlist .tl-type", "Job")
	s.waitText("main .vlist .tl-type", "NodeRegistered")
	s.shot("timeline-node-topic")
}
