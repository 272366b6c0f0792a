package ui

import (
	"strconv"
	"testing"

	napi "github.com/hashicorp/nomad/api"

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

	// At a past index: the events up to it, ending at it, highlighted,
	// and not following.
	ans := testagent.Call(t, s.addr, "GET", "/v1/history/job/default/web?per_page=1", "")
	var first []struct{ Index uint64 }
	decode(t, ans.Body, &first)
	if len(first) != 1 {
		t.Fatalf("the job's history: %s", ans.Body)
	}
	s.open("/timeline?at_index=" + strconv.FormatUint(first[0].Index, 10))
	s.waitText("main .vlist .tl-row.at .tl-type", "JobRegistered")
	s.waitNoText("main .vlist .tl-type", "JobDeregistered")
	s.waitText("main .tl-status", "not following")
	s.shot("timeline-past")
	s.open("/timeline")

	s.click("main .topics summary", "Topics")
	s.click("main .topics label", "Node")
	s.waitText("main .topics summary", "Topics: Node")
	s.waitNoText("main .vlist .tl-type", "Job")
	s.waitText("main .vlist .tl-type", "NodeRegistered")
	s.shot("timeline-node-topic")
}

// The timeline opens on the newest ~500 indexes; "Load older events"
// reads the page before them, keeping the reader's place.
func TestTimelineLoadsOlderEvents(t *testing.T) {
	s := start(t)
	for i := range 600 {
		if _, err := s.api.Namespaces().Register(&napi.Namespace{Name: "ns-" + strconv.Itoa(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.open("/timeline")
	s.waitText("main .vlist .tl-type", "NamespaceUpserted")
	s.waitText("main .tl-count", "from index ")
	s.waitNoText("main .vlist", "NodeRegistered")
	s.click("main button", "Load older events")
	s.waitText("main .tl-count", "from the first index")
	s.click("main label", "Entity id")
	s.fill("main input[type=search]", "ns-1")
	s.waitNoText("main .vlist", "ns-2")
	s.shot("timeline-older")
}
