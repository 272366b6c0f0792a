package plan_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func enabled() plan.TrackerConfig {
	c := plan.DefaultTrackerConfig()
	c.Enabled = true
	return c
}

func newTracker(t *testing.T, c plan.TrackerConfig) *plan.Tracker {
	t.Helper()
	tr, err := plan.NewTracker(c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestTrackerDisabledByDefault(t *testing.T) {
	tr := newTracker(t, plan.DefaultTrackerConfig())
	for i := range 100 {
		if tr.Add("n1", t0.Add(time.Duration(i)*time.Second)) {
			t.Fatal("a disabled tracker named a node")
		}
	}
}

func TestTrackerThreshold(t *testing.T) {
	tr := newTracker(t, enabled())
	for i := range 14 {
		if tr.Add("n1", t0.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("named after %d rejections", i+1)
		}
	}
	if !tr.Add("n1", t0.Add(14*time.Second)) {
		t.Fatal("not named at the 15th rejection")
	}
	// Its count starts over.
	if tr.Count("n1", t0.Add(15*time.Second)) != 0 || tr.Add("n1", t0.Add(16*time.Second)) {
		t.Fatal("count did not start over")
	}
}

func TestTrackerWindowExpiry(t *testing.T) {
	tr := newTracker(t, enabled())
	// 14 rejections 30s apart, then the window slides past the first 11.
	for i := range 14 {
		tr.Add("n1", t0.Add(time.Duration(i)*time.Minute/2))
	}
	now := t0.Add(10*time.Minute + 5*time.Minute)
	if got := tr.Count("n1", now); got != 3 {
		t.Fatalf("count %d in window, want 3", got)
	}
	if tr.Add("n1", now) {
		t.Fatal("named although old rejections expired")
	}
	// Spread thinly, rejections never reach the threshold.
	tr2 := newTracker(t, enabled())
	for i := range 100 {
		if tr2.Add("n2", t0.Add(time.Duration(i)*time.Minute)) {
			t.Fatalf("named at %d with one rejection a minute", i)
		}
	}
}

func TestTrackerRateLimit(t *testing.T) {
	tr := newTracker(t, enabled())
	named := func(now time.Time, nodes int, from int) int {
		n := 0
		for i := range nodes {
			id := fmt.Sprintf("node-%03d", from+i)
			for range 15 {
				if tr.Add(id, now) {
					n++
				}
			}
		}
		return n
	}
	// A burst of 10, then nothing until tokens refill.
	if got := named(t0, 12, 0); got != 10 {
		t.Fatalf("named %d at once, want the burst of 10", got)
	}
	if got := named(t0.Add(5*time.Minute), 3, 100); got != 0 {
		t.Fatalf("named %d before a token refilled", got)
	}
	// 5 per 30 minutes: one token every 6 minutes.
	if got := named(t0.Add(6*time.Minute), 3, 200); got != 1 {
		t.Fatalf("named %d after 6 minutes, want 1", got)
	}
	if got := named(t0.Add(36*time.Minute), 10, 300); got != 5 {
		t.Fatalf("named %d after another 30 minutes, want 5", got)
	}
}

func TestTrackerBoundsNodes(t *testing.T) {
	c := enabled()
	c.MaxNodes = 3
	tr := newTracker(t, c)
	for i := range 5 {
		tr.Add(fmt.Sprintf("n%d", i), t0.Add(time.Duration(i)*time.Second))
	}
	if tr.Count("n0", t0.Add(10*time.Second)) != 0 || tr.Count("n4", t0.Add(10*time.Second)) != 1 {
		t.Fatal("did not forget the least recently rejected nodes")
	}
}

func TestTrackerConfigValidate(t *testing.T) {
	c := enabled()
	c.Threshold = 0
	if _, err := plan.NewTracker(c); err == nil {
		t.Fatal("accepted a zero threshold")
	}
}

// Evaluator feeds rejections to the tracker and names the node.
func TestEvaluatorNamesIneligibleNodes(t *testing.T) {
	c := enabled()
	c.Threshold = 3
	ev := &plan.Evaluator{Tracker: newTracker(t, c)}
	h, pl := setup(t)
	n, _ := h.State.Node("n2")
	full := *n
	full.Resources = events.NodeResources{CPU: 100, MemoryMB: 100}
	h.State.UpsertNode(&full)
	var res plan.Result
	for i := range 3 {
		res = ev.Evaluate(pl, h.State, t0.Add(time.Duration(i)*time.Second))
	}
	if !slices.Equal(res.IneligibleNodes, []string{"n2"}) {
		t.Fatalf("ineligible %v", res.IneligibleNodes)
	}
	var _ scheduler.State = h.State
}

// A node refused only because the plan would move an allocation onto it
// is not at fault: the tracker does not count it.
func TestEvaluatorDoesNotBlameNodeForAMove(t *testing.T) {
	c := enabled()
	c.Threshold = 1
	ev := &plan.Evaluator{Tracker: newTracker(t, c)}
	h, pl := setup(t)
	again, to := moveFirst(t, h, pl)
	res := ev.Evaluate(again, h.State, t0)
	if res.Reasons[to] != plan.ReasonAllocElsewhere || len(res.IneligibleNodes) != 0 || ev.Tracker.Count(to, t0) != 0 {
		t.Fatalf("reasons %v, ineligible %v, count %d", res.Reasons, res.IneligibleNodes, ev.Tracker.Count(to, t0))
	}
}
