package deploywatch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/deploywatch"
)

var t0 = time.Unix(1_700_000_000, 0)

// spec returns version v of job web: group web of count 3 running cmd,
// with update strategy u.
func spec(v uint64, cmd string, u events.UpdateStrategy) *events.Job {
	return &events.Job{ID: "web", Name: "web", Namespace: "default", Type: events.JobTypeService, Version: v,
		Update: &u, TaskGroups: []events.TaskGroup{{Name: "web", Count: 3, Update: &u,
			Tasks: []events.Task{{Name: "t", Driver: "exec", Config: events.TaskConfig{"command": cmd},
				Resources: &events.Resources{CPU: 100, MemoryMB: 64}}}}}}
}

// health is an allocation's reported health: unset, healthy or unhealthy.
type health int

const (
	unset health = iota
	healthy
	unhealthy
)

// al returns a running allocation of group web.
func al(id string, version uint64, dep string, h health, canary bool) *events.Allocation {
	a := &events.Allocation{ID: id, Namespace: "default", JobID: "web", TaskGroup: "web", Name: "web.web[0]",
		JobVersion: version, DeploymentID: dep, DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
	if h != unset || canary {
		a.DeploymentStatus = &events.AllocDeploymentStatus{Canary: canary}
		if h != unset {
			ok := h == healthy
			a.DeploymentStatus.Healthy = &ok
		}
	}
	return a
}

func stopped(a *events.Allocation) *events.Allocation {
	a.DesiredStatus = events.AllocDesiredStop
	return a
}

func TestDecide(t *testing.T) {
	rolling := events.UpdateStrategy{MaxParallel: 1, ProgressDeadline: 10 * time.Minute}
	noDeadline := events.UpdateStrategy{MaxParallel: 1}
	canary := events.UpdateStrategy{MaxParallel: 1, Canary: 1, ProgressDeadline: 10 * time.Minute}
	auto := canary
	auto.AutoPromote = true
	revert := noDeadline
	revert.AutoRevert = true

	dep := func(status string, st events.DeploymentState) events.Deployment {
		return events.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: 1, Status: status,
			StatusDescription: "Deployment is running", TaskGroups: map[string]*events.DeploymentState{"web": &st}}
	}
	run := events.DeploymentStatusRunning
	later := t0.Add(time.Minute).UnixNano()
	deadline := t0.Add(10 * time.Minute).UnixNano()
	old3 := func() []*events.Allocation {
		return []*events.Allocation{al("o0", 0, "d0", healthy, false), al("o1", 0, "d0", healthy, false), al("o2", 0, "d0", healthy, false)}
	}
	with := func(list []*events.Allocation, more ...*events.Allocation) []*events.Allocation {
		return append(list, more...)
	}

	for _, tc := range []struct {
		name    string
		d       events.Deployment
		job     *events.Job // the current version (version 0 is "/bin/a")
		allocs  []*events.Allocation
		now     time.Time
		outcome string
		// status, description and group state of the decided deployment
		status, desc string
		want         events.DeploymentState
		eval, revert bool
		deadline     int64 // Decision.Deadline, Unix ns; 0 for none
	}{
		{name: "initializing is N3's", d: dep(events.DeploymentStatusInitializing, events.DeploymentState{DesiredTotal: 3}),
			job: spec(1, "/bin/b", rolling), outcome: deploywatch.OutcomeNone},
		{name: "job gone", d: dep(run, events.DeploymentState{DesiredTotal: 3}), outcome: deploywatch.OutcomeNone},
		{name: "pending is now running", d: dep(events.DeploymentStatusPending, events.DeploymentState{DesiredTotal: 3}),
			job: spec(1, "/bin/b", rolling), allocs: old3(), outcome: deploywatch.OutcomeRunning,
			status: run, desc: deploywatch.DescriptionRunning, want: events.DeploymentState{DesiredTotal: 3, RequireProgressBy: deadline},
			deadline: deadline},
		{name: "job stopped", d: dep(run, events.DeploymentState{DesiredTotal: 3}), job: func() *events.Job {
			j := spec(1, "/bin/b", rolling)
			j.Stop = true
			return j
		}(), outcome: deploywatch.OutcomeCancelled, status: events.DeploymentStatusCancelled, desc: deploywatch.DescriptionStoppedJob,
			want: events.DeploymentState{DesiredTotal: 3}},
		{name: "newer version", d: dep(run, events.DeploymentState{DesiredTotal: 3}), job: spec(2, "/bin/c", rolling),
			outcome: deploywatch.OutcomeCancelled, status: events.DeploymentStatusCancelled, desc: deploywatch.DescriptionNewerJob,
			want: events.DeploymentState{DesiredTotal: 3}},
		{name: "nothing new", d: dep(run, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", rolling), allocs: with(old3(), al("n0", 1, "d1", unset, false)), outcome: deploywatch.OutcomeNone,
			deadline: deadline},
		{name: "an allocation became healthy", d: dep(run, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", rolling), allocs: with(old3(), stopped(al("s0", 0, "d0", healthy, false)), al("n0", 1, "d1", healthy, false)),
			now: t0.Add(time.Minute), outcome: deploywatch.OutcomeProgress, status: run, desc: "Deployment is running",
			want: events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, HealthyAllocs: 1, RequireProgressBy: later + int64(10*time.Minute)},
			eval: true, deadline: later + int64(10*time.Minute)},
		{name: "every allocation healthy", d: dep(run, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 3, HealthyAllocs: 2}),
			job: spec(1, "/bin/b", noDeadline), allocs: []*events.Allocation{al("n0", 1, "d1", healthy, false), al("n1", 1, "d1", healthy, false),
				al("n2", 1, "d1", healthy, false), stopped(al("o0", 0, "d0", healthy, false))},
			outcome: deploywatch.OutcomeSuccessful, status: events.DeploymentStatusSuccessful, desc: deploywatch.DescriptionSuccessful,
			want: events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 3, HealthyAllocs: 3}},
		{name: "a count change: the old allocations count", d: dep(run, events.DeploymentState{DesiredTotal: 4}),
			job: spec(1, "/bin/a", noDeadline), allocs: with(old3(), al("n3", 1, "d1", healthy, false)),
			outcome: deploywatch.OutcomeSuccessful, status: events.DeploymentStatusSuccessful, desc: deploywatch.DescriptionSuccessful,
			want: events.DeploymentState{DesiredTotal: 4, PlacedAllocs: 1, HealthyAllocs: 4}},
		{name: "healthy canary waits for promotion", d: dep(run, events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1,
			PlacedCanaries: []string{"c0"}, PlacedAllocs: 1, RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", canary), allocs: with(old3(), al("c0", 1, "d1", healthy, true)),
			now: t0.Add(time.Minute), outcome: deploywatch.OutcomeProgress, status: run, desc: deploywatch.DescriptionNeedsPromotion,
			want: events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{"c0"}, PlacedAllocs: 1,
				HealthyAllocs: 1, RequireProgressBy: later + int64(10*time.Minute)}, eval: true},
		{name: "a canary the deployment did not record", d: dep(run, events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", canary), allocs: with(old3(), al("c0", 1, "d1", unset, true)),
			outcome: deploywatch.OutcomeProgress, status: run, desc: deploywatch.DescriptionNeedsPromotion,
			want: events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{"c0"}, PlacedAllocs: 1,
				RequireProgressBy: deadline}, deadline: deadline},
		{name: "auto promote", d: dep(run, events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{"c0"},
			PlacedAllocs: 1, HealthyAllocs: 1, RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", auto), allocs: with(old3(), al("c0", 1, "d1", healthy, true)), now: t0.Add(time.Minute),
			outcome: deploywatch.OutcomePromoted, status: run, desc: deploywatch.DescriptionRunning,
			want: events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{"c0"}, PlacedAllocs: 1,
				HealthyAllocs: 1, Promoted: true, RequireProgressBy: later + int64(10*time.Minute)},
			eval: true, deadline: later + int64(10*time.Minute)},
		{name: "auto promote waits for healthy canaries", d: dep(run, events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1,
			PlacedCanaries: []string{"c0"}, PlacedAllocs: 1, RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", auto), allocs: with(old3(), al("c0", 1, "d1", unset, true)),
			outcome: deploywatch.OutcomeProgress, status: run, desc: deploywatch.DescriptionAutoPromotion,
			want: events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{"c0"}, PlacedAllocs: 1,
				RequireProgressBy: deadline}, deadline: deadline},
		{name: "promoted canary counts", d: dep(run, events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{"c0"},
			Promoted: true, PlacedAllocs: 3, HealthyAllocs: 2}),
			job: spec(1, "/bin/b", noDeadline), allocs: []*events.Allocation{al("c0", 1, "d1", healthy, true), al("n1", 1, "d1", healthy, false),
				al("n2", 1, "d1", healthy, false)},
			outcome: deploywatch.OutcomeSuccessful, status: events.DeploymentStatusSuccessful, desc: deploywatch.DescriptionSuccessful,
			want: events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{"c0"}, Promoted: true,
				PlacedAllocs: 3, HealthyAllocs: 3}},
		{name: "an unhealthy allocation fails it", d: dep(run, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1}),
			job: spec(1, "/bin/b", noDeadline), allocs: with(old3(), al("n0", 1, "d1", unhealthy, false)),
			outcome: deploywatch.OutcomeFailed, status: events.DeploymentStatusFailed, desc: deploywatch.DescriptionFailedAllocations,
			want: events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, UnhealthyAllocs: 1}, eval: true},
		{name: "and reverts with auto_revert", d: dep(run, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1}),
			job: spec(1, "/bin/b", revert), allocs: with(old3(), al("n0", 1, "d1", unhealthy, false)),
			outcome: deploywatch.OutcomeFailed, status: events.DeploymentStatusFailed, desc: deploywatch.DescriptionFailedAllocations,
			want: events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, UnhealthyAllocs: 1}, revert: true},
		{name: "even paused", d: dep(events.DeploymentStatusPaused, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1}),
			job: spec(1, "/bin/b", noDeadline), allocs: with(old3(), al("n0", 1, "d1", unhealthy, false)),
			outcome: deploywatch.OutcomeFailed, status: events.DeploymentStatusFailed, desc: deploywatch.DescriptionFailedAllocations,
			want: events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, UnhealthyAllocs: 1}, eval: true},
		{name: "progress deadline passed", d: dep(run, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, AutoRevert: true,
			RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", rolling), allocs: with(old3(), al("n0", 1, "d1", unset, false)), now: t0.Add(10 * time.Minute),
			outcome: deploywatch.OutcomeFailed, status: events.DeploymentStatusFailed, desc: deploywatch.DescriptionProgressDeadline,
			want: events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, AutoRevert: true, RequireProgressBy: deadline}, revert: true},
		{name: "not before", d: dep(run, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1, RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", rolling), allocs: with(old3(), al("n0", 1, "d1", unset, false)), now: t0.Add(10*time.Minute - 1),
			outcome: deploywatch.OutcomeNone, deadline: deadline},
		{name: "nor while paused", d: dep(events.DeploymentStatusPaused, events.DeploymentState{DesiredTotal: 3, PlacedAllocs: 1,
			RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", rolling), allocs: with(old3(), al("n0", 1, "d1", unset, false)), now: t0.Add(time.Hour),
			outcome: deploywatch.OutcomeNone},
		{name: "nor while ready canaries wait for promotion", d: dep(run, events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1,
			PlacedCanaries: []string{"c0"}, PlacedAllocs: 1, HealthyAllocs: 1, RequireProgressBy: deadline}),
			job: spec(1, "/bin/b", canary), allocs: with(old3(), al("c0", 1, "d1", healthy, true)), now: t0.Add(time.Hour),
			outcome: deploywatch.OutcomeProgress, status: run, desc: deploywatch.DescriptionNeedsPromotion,
			want: events.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{"c0"}, PlacedAllocs: 1,
				HealthyAllocs: 1, RequireProgressBy: deadline}},
		{name: "paused never succeeds", d: dep(events.DeploymentStatusPaused, events.DeploymentState{DesiredTotal: 1, HealthyAllocs: 1}),
			job: spec(1, "/bin/a", noDeadline), allocs: []*events.Allocation{al("o0", 0, "d0", healthy, false)}, outcome: deploywatch.OutcomeNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := deploywatch.Input{Deployment: tc.d, Job: tc.job, Allocs: tc.allocs,
				Versions: map[uint64]*events.Job{0: spec(0, "/bin/a", rolling)}}
			if tc.job != nil {
				in.Versions[tc.job.Version] = tc.job
			}
			now := tc.now
			if now.IsZero() {
				now = t0
			}
			before := tc.d.TaskGroups["web"].PlacedCanaries
			dec := deploywatch.Decide(in, now)
			if !dec.Deadline.Equal(time.Unix(0, tc.deadline)) && !(tc.deadline == 0 && dec.Deadline.IsZero()) {
				t.Errorf("deadline %v, want %v", dec.Deadline, time.Unix(0, tc.deadline))
			}
			if len(before) > 0 && &before[0] == &tc.d.TaskGroups["web"].PlacedCanaries[0] && len(tc.d.TaskGroups["web"].PlacedCanaries) != len(before) {
				t.Error("Decide changed its input")
			}
			if dec.Outcome != tc.outcome {
				t.Fatalf("outcome %q, want %q (%+v)", dec.Outcome, tc.outcome, dec.Deployment)
			}
			if tc.outcome == deploywatch.OutcomeNone {
				if dec.Deployment != nil {
					t.Fatalf("no outcome but a deployment %+v", dec.Deployment)
				}
				return
			}
			got := dec.Deployment
			if got.Status != tc.status || got.StatusDescription != tc.desc || dec.Eval != tc.eval || dec.Revert != tc.revert {
				t.Fatalf("decided %s %q eval=%v revert=%v", got.Status, got.StatusDescription, dec.Eval, dec.Revert)
			}
			if st := got.TaskGroups["web"]; strings.Join(st.PlacedCanaries, ",") != strings.Join(tc.want.PlacedCanaries, ",") ||
				st.DesiredTotal != tc.want.DesiredTotal || st.DesiredCanaries != tc.want.DesiredCanaries || st.Promoted != tc.want.Promoted ||
				st.PlacedAllocs != tc.want.PlacedAllocs || st.HealthyAllocs != tc.want.HealthyAllocs ||
				st.UnhealthyAllocs != tc.want.UnhealthyAllocs || st.RequireProgressBy != tc.want.RequireProgressBy || st.AutoRevert != tc.want.AutoRevert {
				t.Fatalf("group state %+v, want %+v", *st, tc.want)
			}
			// Deciding again on what was decided changes nothing more.
			if tc.outcome != deploywatch.OutcomeCancelled && got.Active() {
				in.Deployment = *got
				if again := deploywatch.Decide(in, now); again.Deployment != nil && again.Outcome != deploywatch.OutcomeFailed {
					t.Fatalf("not a fixed point: then %s %+v", again.Outcome, again.Deployment)
				}
			}
		})
	}
}
