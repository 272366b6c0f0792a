package allocrunner_test

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/events"
)

func TestDecideRestart(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	fail := allocrunner.Exit{}
	ok := allocrunner.Exit{Successful: true}
	policy := events.RestartPolicy{Attempts: 2, Interval: 10 * time.Minute, Delay: 15 * time.Second, Mode: "fail"}
	delay := policy
	delay.Mode = "delay"
	none := policy
	none.Attempts = 0
	type want struct {
		action allocrunner.RestartAction
		delay  time.Duration
		window allocrunner.RestartWindow
	}
	for _, tc := range []struct {
		name    string
		policy  events.RestartPolicy
		jobType string
		window  allocrunner.RestartWindow
		exit    allocrunner.Exit
		now     time.Time
		jitter  float64
		want    want
	}{
		{"first failure opens a window", policy, "service", allocrunner.RestartWindow{}, fail, t0, 0,
			want{allocrunner.Restart, 15 * time.Second, allocrunner.RestartWindow{Start: t0, Count: 1}}},
		{"jitter adds up to a quarter", policy, "service", allocrunner.RestartWindow{}, fail, t0, 0.5,
			want{allocrunner.Restart, 15*time.Second + 1875*time.Millisecond, allocrunner.RestartWindow{Start: t0, Count: 1}}},
		{"second failure within the interval", policy, "service", allocrunner.RestartWindow{Start: t0, Count: 1}, fail, t0.Add(time.Minute), 0,
			want{allocrunner.Restart, 15 * time.Second, allocrunner.RestartWindow{Start: t0, Count: 2}}},
		{"attempts exhausted, mode fail", policy, "service", allocrunner.RestartWindow{Start: t0, Count: 2}, fail, t0.Add(2 * time.Minute), 0,
			want{allocrunner.Fail, 0, allocrunner.RestartWindow{Start: t0, Count: 3}}},
		{"attempts exhausted, mode delay waits for the interval's end", delay, "service", allocrunner.RestartWindow{Start: t0, Count: 2}, fail, t0.Add(2 * time.Minute), 0,
			want{allocrunner.Restart, 8 * time.Minute, allocrunner.RestartWindow{Start: t0, Count: 3}}},
		{"a failure after the interval opens a new one", policy, "service", allocrunner.RestartWindow{Start: t0, Count: 2}, fail, t0.Add(11 * time.Minute), 0,
			want{allocrunner.Restart, 15 * time.Second, allocrunner.RestartWindow{Start: t0.Add(11 * time.Minute), Count: 1}}},
		{"a successful service task restarts", policy, "service", allocrunner.RestartWindow{}, ok, t0, 0,
			want{allocrunner.Restart, 15 * time.Second, allocrunner.RestartWindow{Start: t0, Count: 1}}},
		{"a successful batch task terminates", policy, "batch", allocrunner.RestartWindow{}, ok, t0, 0,
			want{allocrunner.Terminate, 0, allocrunner.RestartWindow{}}},
		{"a successful sysbatch task terminates", none, "sysbatch", allocrunner.RestartWindow{}, ok, t0, 0,
			want{allocrunner.Terminate, 0, allocrunner.RestartWindow{}}},
		{"a failed batch task restarts", policy, "batch", allocrunner.RestartWindow{}, fail, t0, 0,
			want{allocrunner.Restart, 15 * time.Second, allocrunner.RestartWindow{Start: t0, Count: 1}}},
		{"no attempts allowed", none, "service", allocrunner.RestartWindow{}, fail, t0, 0,
			want{allocrunner.Fail, 0, allocrunner.RestartWindow{}}},
		{"an unrecoverable start error fails at once", policy, "service", allocrunner.RestartWindow{}, allocrunner.Exit{Unrecoverable: true}, t0, 0,
			want{allocrunner.Fail, 0, allocrunner.RestartWindow{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := allocrunner.DecideRestart(tc.policy, tc.jobType, tc.window, tc.exit, tc.now, tc.jitter)
			if d.Action != tc.want.action || d.Delay != tc.want.delay || d.Window != tc.want.window || d.Reason == "" {
				t.Errorf("got %v after %v, window %+v (%q); want %v after %v, window %+v",
					d.Action, d.Delay, d.Window, d.Reason, tc.want.action, tc.want.delay, tc.want.window)
			}
		})
	}
}

// Two attempts in the interval: the task starts three times, then fails.
func TestDecideRestartSequence(t *testing.T) {
	p := events.RestartPolicy{Attempts: 2, Interval: time.Hour, Delay: time.Second, Mode: "fail"}
	now := time.Unix(0, 0)
	var w allocrunner.RestartWindow
	var actions []allocrunner.RestartAction
	for range 3 {
		d := allocrunner.DecideRestart(p, "service", w, allocrunner.Exit{}, now, 0.99)
		actions = append(actions, d.Action)
		w = d.Window
		now = now.Add(d.Delay)
	}
	if actions[0] != allocrunner.Restart || actions[1] != allocrunner.Restart || actions[2] != allocrunner.Fail {
		t.Fatalf("actions %v", actions)
	}
}

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
	}{
		{"running, not long enough", running, t0.Add(time.Second), t0.Add(5 * time.Second), false, false, t0.Add(11 * time.Second)},
		{"running long enough", running, t0.Add(time.Second), t0.Add(11 * time.Second), true, true, time.Time{}},
		{"not all running", pending, time.Time{}, t0.Add(5 * time.Second), false, false, t0.Add(time.Minute)},
		{"a task failed", failed, time.Time{}, t0.Add(5 * time.Second), false, true, time.Time{}},
		{"deadline passed", pending, time.Time{}, t0.Add(time.Minute), false, true, time.Time{}},
		{"deadline before min healthy time", running, t0.Add(55 * time.Second), t0.Add(56 * time.Second), false, false, t0.Add(time.Minute)},
	} {
		in := base
		in.States, in.RunningSince = tc.states, tc.since
		healthy, decided, next := allocrunner.DecideHealth(in, tc.now)
		if healthy != tc.healthy || decided != tc.decided || !next.Equal(tc.next) {
			t.Errorf("%s: healthy %v decided %v next %v; want %v %v %v", tc.name, healthy, decided, next, tc.healthy, tc.decided, tc.next)
		}
	}
}
