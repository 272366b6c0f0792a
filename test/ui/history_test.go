package ui

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/test/testagent"
)

// From a timeline row, the link to a job's own timeline opens its
// history page: the job's registration, and its allocation's events
// (the job's timeline holds its allocations').
func TestHistoryFromTheTimeline(t *testing.T) {
	s := start(t)
	testagent.Register(t, s.api, testagent.SleepJob("service", "web", 1, 100))
	s.open("/timeline")
	s.waitText("main .vlist .tl-type", "JobRegistered")
	s.click("main .vlist a", "timeline of job web")
	s.waitText("main h1", "History of job default/web")
	if !strings.HasPrefix(s.url(), "/ui/history/job/default%2Fweb") {
		t.Fatalf("the timeline link went to %s", s.url())
	}
	s.waitText("main table.history", "JobRegistered")
	s.waitText("main table.history", "registered version 0")
	s.waitText("main table.history", "AllocsPlaced")
	s.waitText("main table.history", "ClientStatus") // a change line below an event
	s.shot("history")
	s.checkA11y("history")

	s.click("main label", "Newest first")
	s.waitText("main table.history tbody:first-of-type", "AllocsClientUpdated")

	s.open("/history/node/no-such-node")
	s.waitText("main", "No event ever touched node no-such-node")
}
