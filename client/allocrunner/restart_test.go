package allocrunner_test

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/events"
)

func TestClientStatus(t *testing.T) {
	st := func(state string, failed bool) *events.TaskState {
		return &events.TaskState{State: state, Failed: failed}
	}
	for _, tc := range []struct {
		name   string
		states map[string]*events.TaskState
		want   string
	}{
		{"no tasks", nil, events.AllocClientPending},
		{"all pending", map[string]*events.TaskState{"a": st("pending", false), "b": st("pending", false)}, events.AllocClientPending},
		{"one running", map[string]*events.TaskState{"a": st("pending", false), "b": st("running", false)}, events.AllocClientRunning},
		{"running and done", map[string]*events.TaskState{"a": st("dead", false), "b": st("running", false)}, events.AllocClientRunning},
		{"all done", map[string]*events.TaskState{"a": st("dead", false), "b": st("dead", false)}, events.AllocClientComplete},
		{"done and pending", map[string]*events.TaskState{"a": st("dead", false), "b": st("pending", false)}, events.AllocClientPending},
		{"one failed", map[string]*events.TaskState{"a": st("dead", true), "b": st("running", false)}, events.AllocClientFailed},
		{"failed and done", map[string]*events.TaskState{"a": st("dead", true), "b": st("dead", false)}, events.AllocClientFailed},
	} {
		if got, desc := allocrunner.ClientStatus(tc.states); got != tc.want || desc == "" {
			t.Errorf("%s: %s (%q), want %s", tc.name, got, desc, tc.want)
		}
	}
}

func TestDecideHealth(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	running := map[string]*events.TaskState{"a": {State: "running"}, "b": {State: "running"}}
	failed := map[string]*events.TaskState{"a": {State: "running"}, "b": {State: "dead", Failed: true}}
	pending := map[string]*events.TaskState{"a": {State: "running"}, "b": {State: "pending"}}
	base := allocrunner.HealthInput{Placed: t0, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
	for _, tc := range []struct {
		name             string
		states           map[string]*events.TaskState
		since            time.Time
		now              time.Time
		healthy, decided bool
		next             time.Time
		// checks: "" none count, "failing" or "passing".
		checks string
	}{
		{"running, not long enough", running, t0.Add(time.Second), t0.Add(5 * time.Second), false, false, t0.Add(11 * time.Second), ""},
		{"running long enough", running, t0.Add(time.Second), t0.Add(11 * time.Second), true, true, time.Time{}, ""},
		{"not all running", pending, time.Time{}, t0.Add(5 * time.Second), false, false, t0.Add(time.Minute), ""},
		{"a task failed", failed, time.Time{}, t0.Add(5 * time.Second), false, true, time.Time{}, ""},
		{"deadline passed", pending, time.Time{}, t0.Add(time.Minute), false, true, time.Time{}, ""},
		{"deadline before min healthy time", running, t0.Add(55 * time.Second), t0.Add(56 * time.Second), false, false, t0.Add(time.Minute), ""},
		// With checks, min_healthy_time is not enough: they must pass.
		{"checks failing", running, t0.Add(time.Second), t0.Add(30 * time.Second), false, false, t0.Add(time.Minute), "failing"},
		{"checks passing", running, t0.Add(time.Second), t0.Add(30 * time.Second), true, true, time.Time{}, "passing"},
		{"checks passing too early", running, t0.Add(time.Second), t0.Add(5 * time.Second), false, false, t0.Add(11 * time.Second), "passing"},
		{"checks failing past the deadline", running, t0.Add(time.Second), t0.Add(time.Minute), false, true, time.Time{}, "failing"},
	} {
		in := base
		in.States, in.RunningSince = tc.states, tc.since
		in.Checks, in.ChecksPassing = tc.checks != "", tc.checks == "passing"
		healthy, decided, next := allocrunner.DecideHealth(in, tc.now)
		if healthy != tc.healthy || decided != tc.decided || !next.Equal(tc.next) {
			t.Errorf("%s: healthy %v decided %v next %v; want %v %v %v", tc.name, healthy, decided, next, tc.healthy, tc.decided, tc.next)
		}
	}
}
