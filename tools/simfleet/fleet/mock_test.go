package fleet

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func sa(id, desired, client string) serverAlloc {
	return serverAlloc{ID: id, DesiredStatus: desired, ClientStatus: client}
}

// render lists the node's allocations as id=state[*] (* dirty), by id.
func render(m *mockNode) string {
	var out []string
	for id, l := range m.allocs {
		s := id + "=" + l.state
		if m.dirty[id] {
			s += "*"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func TestMockReconcile(t *testing.T) {
	type step struct {
		answer []serverAlloc
		index  uint64
		at     time.Duration // after t0
		ack    bool          // ack the updates at index+1 after the step
		want   string
	}
	deploy := func(a serverAlloc) serverAlloc { a.DeploymentID = "d1"; return a }
	for _, tc := range []struct {
		name  string
		rules mockRules
		steps []step
	}{{
		name: "a new allocation runs at once and is reported once",
		steps: []step{
			{answer: []serverAlloc{sa("a", "run", "pending")}, index: 10, want: "a=running*", ack: true},
			// an answer read before the update landed does not report again
			{answer: []serverAlloc{sa("a", "run", "pending")}, index: 10, want: "a=running"},
			{answer: []serverAlloc{sa("a", "run", "running")}, index: 12, want: "a=running"},
		},
	}, {
		name: "stopped by the servers completes; forgotten once complete",
		steps: []step{
			{answer: []serverAlloc{sa("a", "run", "running")}, index: 10, want: "a=running"},
			{answer: []serverAlloc{sa("a", "stop", "running")}, index: 11, want: "a=complete*", ack: true},
			{answer: []serverAlloc{sa("a", "stop", "complete")}, index: 13, want: ""},
		},
	}, {
		name:  "run_for completes the allocation",
		rules: mockRules{runFor: time.Minute},
		steps: []step{
			{answer: []serverAlloc{sa("a", "run", "pending")}, index: 10, want: "a=running*", ack: true},
			{answer: []serverAlloc{sa("a", "run", "running")}, index: 12, at: 59 * time.Second, want: "a=running"},
			{answer: []serverAlloc{sa("a", "run", "running")}, index: 13, at: time.Minute, want: "a=complete*"},
		},
	}, {
		name: "a stop for an allocation never started is reported complete",
		steps: []step{
			{answer: []serverAlloc{sa("a", "stop", "pending")}, index: 10, want: "a=complete*"},
		},
	}, {
		name: "lost on the servers: dropped here",
		steps: []step{
			{answer: []serverAlloc{sa("a", "run", "running")}, index: 10, want: "a=running"},
			{answer: []serverAlloc{sa("a", "stop", "lost")}, index: 20, want: ""},
		},
	}, {
		name: "unknown after a disconnect: running reported again",
		steps: []step{
			{answer: []serverAlloc{sa("a", "run", "pending")}, index: 10, want: "a=running*", ack: true},
			{answer: []serverAlloc{sa("a", "run", "unknown")}, index: 30, want: "a=running*"},
		},
	}, {
		name: "gone from the answer: forgotten",
		steps: []step{
			{answer: []serverAlloc{sa("a", "run", "running"), sa("b", "run", "running")}, index: 10, want: "a=running b=running"},
			{answer: []serverAlloc{sa("b", "run", "running")}, index: 11, want: "b=running"},
		},
	}, {
		name: "health is reported once per deployment",
		steps: []step{
			{answer: []serverAlloc{deploy(sa("a", "run", "running"))}, index: 10, want: "a=running*", ack: true},
			{answer: []serverAlloc{deploy(sa("a", "run", "running"))}, index: 20, want: "a=running"},
		},
	}, {
		name:  "fail_rate 1 fails every allocation",
		rules: mockRules{failRate: 1},
		steps: []step{
			{answer: []serverAlloc{sa("a", "run", "pending"), sa("b", "run", "pending")}, index: 10, want: "a=failed* b=failed*"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMockNode(tc.rules)
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				m.reconcile(s.answer, s.index, now)
				if got := render(m); got != s.want {
					t.Fatalf("step %d: %q, want %q", i, got, s.want)
				}
				if s.ack {
					m.acked(m.updates(now, 0), s.index+1)
				}
			}
		})
	}
}

func TestMockUpdates(t *testing.T) {
	m := newMockNode(mockRules{})
	var list []serverAlloc
	for i := range 5 {
		a := sa(fmt.Sprintf("a%d", i), "run", "pending")
		if i == 0 {
			a.DeploymentID = "d1"
			a.DeploymentStatus = &serverHealth{Canary: true}
		}
		list = append(list, a)
	}
	m.reconcile(list, 1, t0)
	us := m.updates(t0, 3)
	if len(us) != 3 || us[0].ID != "a0" || us[2].ID != "a2" {
		t.Fatalf("updates = %+v", us)
	}
	if d := us[0].DeploymentStatus; d == nil || d.Healthy == nil || !*d.Healthy || !d.Canary || d.Timestamp != t0.UnixNano() {
		t.Fatalf("deployment status = %+v", d)
	}
	if us[1].DeploymentStatus != nil {
		t.Fatalf("no deployment, yet %+v", us[1].DeploymentStatus)
	}
	m.acked(us, 2)
	if got := len(m.updates(t0, 0)); got != 2 {
		t.Fatalf("%d left to report, want 2", got)
	}
	if got := m.running(); got != 3 {
		t.Fatalf("running = %d, want 3 (acknowledged)", got)
	}
}

func TestMockTick(t *testing.T) {
	m := newMockNode(mockRules{runFor: 10 * time.Second})
	m.reconcile([]serverAlloc{sa("a", "run", "pending")}, 1, t0)
	m.reconcile([]serverAlloc{sa("a", "run", "pending"), sa("b", "run", "pending")}, 2, t0.Add(5*time.Second))
	if next := m.tick(t0.Add(time.Second)); !next.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("next = %v", next)
	}
	if next := m.tick(t0.Add(10 * time.Second)); !next.Equal(t0.Add(15 * time.Second)) {
		t.Fatalf("next = %v", next)
	}
	if got := render(m); got != "a=complete* b=running*" {
		t.Fatalf("%q", got)
	}
}

func TestFailsIsAFraction(t *testing.T) {
	r := mockRules{seed: 3, failRate: 0.25}
	n := 0
	for i := range 10000 {
		if r.fails(fmt.Sprint("alloc-", i)) {
			n++
		}
	}
	if n < 2300 || n > 2700 {
		t.Fatalf("%d of 10000 fail at rate 0.25", n)
	}
	if r.fails("x") != r.fails("x") {
		t.Fatal("not deterministic")
	}
}

func TestNodeIDIsStable(t *testing.T) {
	a, b := nodeID(1, 42), nodeID(1, 42)
	if a != b || a == nodeID(2, 42) || a == nodeID(1, 43) || len(a) != 36 {
		t.Fatalf("%s %s", a, b)
	}
}
