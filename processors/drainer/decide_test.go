package drainer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// world builds decide's state by hand.
type world struct{ s state }

func newWorld() *world {
	return &world{s: state{Allocs: map[string]*events.Allocation{}, Jobs: map[jobKey]*events.Job{}}}
}

func (w *world) drain(id string, ds events.DrainStrategy) *world {
	w.s.Nodes = append(w.s.Nodes, drainNode{ID: id, ModifyIndex: 7, Strategy: ds})
	return w
}

func (w *world) job(id, typ string, migrate *events.MigrateStrategy) *world {
	w.s.Jobs[jobKey{"default", id}] = &events.Job{ID: id, Namespace: "default", Type: typ,
		TaskGroups: []events.TaskGroup{{Name: "g", Count: 4, Migrate: migrate}}}
	return w
}

// alloc adds a running allocation of job's group g on node; opts change it.
func (w *world) alloc(id, job, node string, opts ...func(*events.Allocation)) *world {
	a := &events.Allocation{ID: id, Namespace: "default", JobID: job, TaskGroup: "g", NodeID: node,
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
	for _, o := range opts {
		o(a)
	}
	w.s.Allocs[id] = a
	return w
}

var yes, no = true, false

func marked(a *events.Allocation) { a.DesiredTransition.Migrate = &yes }
func stopped(a *events.Allocation) {
	a.DesiredStatus = events.AllocDesiredStop
}
func pending(a *events.Allocation)  { a.ClientStatus = events.AllocClientPending }
func failed(a *events.Allocation)   { a.ClientStatus = events.AllocClientFailed }
func complete(a *events.Allocation) { a.ClientStatus = events.AllocClientComplete }
func next(id string) func(*events.Allocation) {
	return func(a *events.Allocation) { a.NextAllocation = id }
}
func prev(id string) func(*events.Allocation) {
	return func(a *events.Allocation) { a.PreviousAllocation = id }
}
func inDeployment(healthy *bool) func(*events.Allocation) {
	return func(a *events.Allocation) {
		a.DeploymentID = "d1"
		if healthy != nil {
			a.DeploymentStatus = &events.AllocDeploymentStatus{Healthy: healthy}
		}
	}
}

// render prints a plan as "mark n1/a1(paced) … | complete n1 … | next 5".
func render(p plan) string {
	var parts []string
	for _, m := range p.Marks {
		parts = append(parts, fmt.Sprintf("mark %s/%s(%s)", m.NodeID, m.AllocID, m.Reason))
	}
	for _, n := range p.Complete {
		parts = append(parts, "complete "+n.ID)
	}
	if p.Next != 0 {
		parts = append(parts, fmt.Sprintf("next %d", p.Next))
	}
	return strings.Join(parts, " | ")
}

func TestDecide(t *testing.T) {
	const now = 1000
	four := func(w *world) *world {
		return w.alloc("a1", "web", "n1").alloc("a2", "web", "n1").alloc("a3", "web", "n1").alloc("a4", "web", "n1")
	}
	for _, tc := range []struct {
		name  string
		world *world
		want  string
	}{
		{"one at a time by default",
			four(newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil)),
			"mark n1/a1(paced)"},
		{"a marked allocation without a replacement is in flight",
			newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil).
				alloc("a1", "web", "n1", marked).alloc("a2", "web", "n1"),
			""},
		{"a pending replacement is in flight",
			newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil).
				alloc("a1", "web", "n1", marked, stopped, next("r1")).alloc("r1", "web", "n9", pending, prev("a1")).
				alloc("a2", "web", "n1"),
			""},
		{"a running replacement lets the next one go",
			newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil).
				alloc("a1", "web", "n1", marked, stopped, next("r1")).alloc("r1", "web", "n9", prev("a1")).
				alloc("a2", "web", "n1").alloc("a3", "web", "n1"),
			"mark n1/a2(paced)"},
		{"a replacement in a deployment must be healthy",
			newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil).
				alloc("a1", "web", "n1", marked, stopped, next("r1")).alloc("r1", "web", "n9", inDeployment(nil)).
				alloc("b1", "web", "n1", marked, stopped, next("s1")).alloc("s1", "web", "n9", inDeployment(&no)).
				alloc("a2", "web", "n1").job("api", events.JobTypeService, nil).
				alloc("c1", "api", "n1", marked, stopped, next("t1")).alloc("t1", "api", "n9", inDeployment(&yes)).
				alloc("c2", "api", "n1"),
			"mark n1/c2(paced)"},
		{"max_parallel from the migrate block, across draining nodes",
			newWorld().drain("n1", events.DrainStrategy{}).drain("n2", events.DrainStrategy{}).
				job("web", events.JobTypeService, &events.MigrateStrategy{MaxParallel: 3}).
				alloc("a1", "web", "n1").alloc("a2", "web", "n1").alloc("b1", "web", "n2").alloc("b2", "web", "n2").
				alloc("x", "web", "n5", marked),
			"mark n1/a1(paced) | mark n1/a2(paced)"},
		{"max_parallel 0 waits for the deadline",
			newWorld().drain("n1", events.DrainStrategy{ForceDeadline: 5000}).
				job("web", events.JobTypeService, &events.MigrateStrategy{MaxParallel: 0}).alloc("a1", "web", "n1"),
			"next 5000"},
		{"a chain is counted once, at its end",
			newWorld().drain("n1", events.DrainStrategy{}).drain("n2", events.DrainStrategy{}).
				job("web", events.JobTypeService, &events.MigrateStrategy{MaxParallel: 2}).
				alloc("a1", "web", "n1", marked, stopped, next("r1")).
				alloc("r1", "web", "n2", marked, stopped, next("r2")).alloc("r2", "web", "n9", pending).
				alloc("a2", "web", "n1"),
			"mark n1/a2(paced) | complete n2"},
		{"a chain ending terminal is over",
			newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil).
				alloc("a1", "web", "n1", marked, stopped, next("r1")).alloc("r1", "web", "n9", failed).
				alloc("a2", "web", "n1"),
			"mark n1/a2(paced)"},
		{"a chain through a collected allocation is over",
			newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil).
				alloc("a1", "web", "n1", marked, stopped, next("gone")).alloc("a2", "web", "n1"),
			"mark n1/a2(paced)"},
		{"batch allocations are left to finish",
			newWorld().drain("n1", events.DrainStrategy{ForceDeadline: 9000}).job("b", events.JobTypeBatch, nil).
				alloc("b1", "b", "n1"),
			"next 9000"},
		{"a finished batch allocation completes the drain",
			newWorld().drain("n1", events.DrainStrategy{}).job("b", events.JobTypeBatch, nil).
				alloc("b1", "b", "n1", complete),
			"complete n1"},
		{"system allocations wait for the others",
			newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil).
				job("sys", events.JobTypeSystem, nil).alloc("a1", "web", "n1", marked).alloc("s1", "sys", "n1"),
			""},
		{"system allocations go last",
			newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil).
				job("sys", events.JobTypeSystem, nil).job("sb", events.JobTypeSysbatch, nil).
				alloc("a1", "web", "n1", marked, stopped, next("r1")).alloc("r1", "web", "n9", pending).
				alloc("s1", "sys", "n1").alloc("s2", "sb", "n1"),
			"mark n1/s1(system) | mark n1/s2(system)"},
		{"ignored system allocations stay and do not hold the drain",
			newWorld().drain("n1", events.DrainStrategy{IgnoreSystemJobs: true}).job("sys", events.JobTypeSystem, nil).
				alloc("s1", "sys", "n1"),
			"complete n1"},
		{"the drain waits for marked system allocations to stop",
			newWorld().drain("n1", events.DrainStrategy{}).job("sys", events.JobTypeSystem, nil).
				alloc("s1", "sys", "n1", marked),
			""},
		{"past the deadline everything left is marked",
			newWorld().drain("n1", events.DrainStrategy{ForceDeadline: now}).drain("n2", events.DrainStrategy{ForceDeadline: 3000}).
				job("web", events.JobTypeService, nil).job("b", events.JobTypeBatch, nil).job("sys", events.JobTypeSystem, nil).
				alloc("a1", "web", "n1", marked).alloc("a2", "web", "n1").alloc("a3", "web", "n1").
				alloc("b1", "b", "n1").alloc("s1", "sys", "n1").alloc("x1", "web", "n2"),
			"mark n1/a2(deadline) | mark n1/a3(deadline) | mark n1/b1(deadline) | mark n1/s1(deadline) | next 3000"},
		{"past the deadline ignored system allocations still stay",
			newWorld().drain("n1", events.DrainStrategy{ForceDeadline: 10, IgnoreSystemJobs: true}).
				job("sys", events.JobTypeSystem, nil).alloc("s1", "sys", "n1").alloc("a1", "web", "n1"),
			"mark n1/a1(deadline)"},
		{"a node whose allocations all stopped is done",
			newWorld().drain("n1", events.DrainStrategy{ForceDeadline: 5000}).drain("n2", events.DrainStrategy{}).
				job("web", events.JobTypeService, nil).
				alloc("a1", "web", "n1", marked, stopped, next("r1")).alloc("r1", "web", "n9", pending).
				alloc("a2", "web", "n1", complete).alloc("a3", "web", "n2"),
			"complete n1"},
		{"a purged job's allocations migrate one at a time",
			newWorld().drain("n1", events.DrainStrategy{}).alloc("g1", "ghost", "n1").alloc("g2", "ghost", "n1"),
			"mark n1/g1(paced)"},
		{"no drain, nothing to do", newWorld().alloc("a1", "web", "n1"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprint(tc.world.s.Allocs)
			if got := render(decide(tc.world.s, now)); got != tc.want {
				t.Fatalf("decide =\n %s\nwant\n %s", got, tc.want)
			}
			if fmt.Sprint(tc.world.s.Allocs) != before {
				t.Fatal("decide changed its state")
			}
		})
	}
}

// TestDecidePacesToTheEnd plays a drain of four allocations with
// max_parallel 1 against a simple model of the scheduler and the client,
// and checks that at no step are two migrating and that the drain
// completes with every allocation replaced elsewhere.
func TestDecidePacesToTheEnd(t *testing.T) {
	w := newWorld().drain("n1", events.DrainStrategy{}).job("web", events.JobTypeService, nil)
	for i := range 4 {
		w.alloc(fmt.Sprintf("a%d", i), "web", "n1")
	}
	s := w.s
	replaced := 0
	for step := 0; ; step++ {
		if step > 50 {
			t.Fatal("the drain does not finish")
		}
		inflight := 0
		for _, a := range s.Allocs {
			if _, ok := s.migrating(a); ok {
				inflight++
			}
		}
		if inflight > 1 {
			t.Fatalf("step %d: %d allocations migrating", step, inflight)
		}
		p := decide(s, 0)
		if len(p.Complete) == 1 {
			break
		}
		for _, m := range p.Marks {
			s.Allocs[m.AllocID].DesiredTransition.Migrate = &yes
		}
		// The scheduler replaces every marked live allocation and stops it;
		// the client then starts the replacements, one change per step.
		switch {
		case len(p.Marks) > 0:
		case func() bool {
			for _, a := range s.Allocs {
				if a.ClientStatus == events.AllocClientPending {
					a.ClientStatus = events.AllocClientRunning
					return true
				}
			}
			return false
		}():
		default:
			for _, id := range sortedIDs(s) {
				a := s.Allocs[id]
				if isTrue(a.DesiredTransition.Migrate) && !a.Terminal() {
					r := fmt.Sprintf("r%d", replaced)
					replaced++
					s.Allocs[r] = &events.Allocation{ID: r, Namespace: "default", JobID: "web", TaskGroup: "g",
						NodeID: "n2", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending,
						PreviousAllocation: a.ID}
					a.NextAllocation, a.DesiredStatus = r, events.AllocDesiredStop
				}
			}
		}
	}
	if replaced != 4 {
		t.Fatalf("%d replacements, want 4", replaced)
	}
}

func sortedIDs(s state) []string {
	var ids []string
	for id := range s.Allocs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func TestReady(t *testing.T) {
	for _, tc := range []struct {
		a    events.Allocation
		want bool
	}{
		{events.Allocation{ClientStatus: events.AllocClientRunning}, true},
		{events.Allocation{ClientStatus: events.AllocClientPending}, false},
		{events.Allocation{ClientStatus: events.AllocClientRunning, DeploymentID: "d"}, false},
		{events.Allocation{ClientStatus: events.AllocClientRunning, DeploymentID: "d",
			DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &yes}}, true},
		{events.Allocation{ClientStatus: events.AllocClientPending, DeploymentID: "d",
			DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &yes}}, false},
	} {
		if got := ready(&tc.a); got != tc.want {
			t.Errorf("ready(%+v) = %v", tc.a, got)
		}
	}

}
