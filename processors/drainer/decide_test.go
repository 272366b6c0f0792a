package drainer

import (
	"fmt"
	"slices"
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
