package ui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	napi "github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/test/testagent"
)

// A job run through the API shows on the jobs page, and its allocation
// reaches running on the job's page without a reload; stopping it from
// the page stops it.
func TestJobPageFollowsAllocationLive(t *testing.T) {
	s := start(t)
	s.open("/jobs")
	s.waitText("main", "No jobs")
	s.checkA11y("jobs (empty)")

	testagent.Register(t, s.api, testagent.SleepJob("service", "web", 1, 100))
	s.waitText("main table", "web") // the list follows a blocking query
	s.shot("jobs")
	// The namespace picker narrows the list to a typed namespace.
	pick := func(ns string) {
		t.Helper()
		s.run("type a namespace", chromedp.Focus(chromedp.CSS(`main input[placeholder="all"]`)),
			chromedp.SendKeys(chromedp.CSS(`main input[placeholder="all"]`), kb.End+strings.Repeat(kb.Backspace, 20)+ns+kb.Enter))
	}
	pick("nope")
	s.waitText("main", "No jobs")
	pick("default")
	s.waitText("main table", "web")
	s.click("main table a", "web")
	s.waitText("main h1", "web")
	if !strings.HasPrefix(s.url(), "/ui/jobs/web@default") {
		t.Fatalf("the job's link went to %s", s.url())
	}
	s.waitText("main", "running") // the allocation's client status, as the client reports it
	s.shot("job")
	s.checkA11y("job")

	s.click("main .toolbar button", "Stop")
	s.waitText("main h1", "dead")
	s.waitText("main", "complete")
}

// The slider moved to before the job existed shows no job, with the
// banner, and every write disabled; the URL reproduces the view.
func TestTimeSliderShowsThePast(t *testing.T) {
	s := start(t)
	before := lastIndex(t, s)
	testagent.Register(t, s.api, testagent.SleepJob("service", "web", 1, 100))

	s.open("/jobs")
	s.waitText("main table", "web")
	s.open("/jobs?at_index=" + strconv.FormatUint(before, 10))
	s.waitText(".timebar .banner", "As of index "+strconv.FormatUint(before, 10))
	s.waitText("main", "No jobs")
	s.shot("jobs-past")

	s.open("/jobs/web@default")
	s.waitText("main h1", "web")
	s.click(".timebar .marks, .timebar button", "previous event")
	s.waitText(".timebar .banner", "Writes are disabled")
	var disabled bool
	if err := s.eval(`[...document.querySelectorAll('main .write button')].every(b => b.disabled)`, &disabled); err != nil || !disabled {
		t.Fatalf("writes enabled in the past (err %v)", err)
	}
	// A time resolves to the last index at or before it.
	var atNow uint64
	if err := s.eval(`import('/ui/api.js').then((a) => a.indexAtTime(new Date(Date.now() + 60000).toISOString()))`, &atNow); err != nil {
		t.Fatal(err)
	}
	if last := lastIndex(t, s); atNow < before || atNow > last {
		t.Fatalf("a minute from now resolves to index %d, want between %d and %d", atNow, before, last)
	}
	s.click(".timebar .banner button", "Back to live")
	s.waitNoText(".timebar", "As of index")
	if strings.Contains(s.url(), "at_index") {
		t.Fatalf("live view still carries the index: %s", s.url())
	}
}

// lastIndex is the newest index the agent's log holds.
func lastIndex(t *testing.T, s *session) uint64 {
	t.Helper()
	ans := testagent.Call(t, s.addr, "GET", "/v1/operator/log?from=1073741824&limit=1", "")
	var page struct{ LastIndex uint64 }
	decode(t, ans.Body, &page)
	return page.LastIndex
}

// A deployment failed is marked on the slider; the mark moves the UI to
// the index where it failed.
func TestSliderMarksAFailedDeployment(t *testing.T) {
	s := start(t)
	j := testagent.SleepJob("service", "web", 1, 100)
	j.Update = &napi.UpdateStrategy{MaxParallel: new(1), HealthCheck: new("task_states"), MinHealthyTime: new(time.Hour), HealthyDeadline: new(2 * time.Hour), ProgressDeadline: new(3 * time.Hour)}
	testagent.Register(t, s.api, j)
	var deployment string
	testagent.WaitFor(t, testagent.ServerTimeout, "the job's deployment", func() bool {
		d, _, err := s.api.Jobs().LatestDeployment("web", nil)
		if err != nil || d == nil {
			return false
		}
		deployment = d.ID
		return true
	})
	if _, _, err := s.api.Deployments().Fail(deployment, nil); err != nil {
		t.Fatal(err)
	}
	failedAt := lastIndex(t, s)

	s.open("/jobs/web@default")
	s.click(".timebar .mark.deploy-failed", "failed")
	s.waitText(".timebar .banner", "As of index")
	var at uint64
	if err := s.eval(`Number(new URLSearchParams(location.search).get('at_index'))`, &at); err != nil {
		t.Fatal(err)
	}
	if at == 0 || at > failedAt {
		t.Fatalf("the mark moved the UI to index %d; the deployment failed at or before %d", at, failedAt)
	}
	s.shot("slider-mark")
}
