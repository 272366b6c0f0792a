package allocrunner_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/mock"
	"github.com/ordoplane/ordo/client/state"
	"github.com/ordoplane/ordo/events"
)

// countingDriver wraps the mock driver, failing the test when one start
// attempt (TaskConfig.ID) is started twice.
type countingDriver struct {
	driver.Driver
	t  *testing.T
	mu sync.Mutex
	// starts counts Start calls by task config ID; stops records when
	// Stop was called on each started task.
	starts   map[string]int
	order    []string
	recovers int
	stops    []time.Time
}

func newCountingDriver(t *testing.T) *countingDriver {
	d, err := mock.New(mock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &countingDriver{Driver: d, t: t, starts: map[string]int{}}
}

func (d *countingDriver) Start(ctx context.Context, cfg driver.TaskConfig) (driver.Handle, error) {
	d.mu.Lock()
	d.starts[cfg.ID]++
	d.order = append(d.order, cfg.ID)
	if d.starts[cfg.ID] > 1 {
		d.t.Errorf("start attempt %s started twice", cfg.ID)
	}
	d.mu.Unlock()
	h, err := d.Driver.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &stopRecorder{Handle: h, d: d}, nil
}

func (d *countingDriver) Recover(ctx context.Context, s driver.HandleState) (driver.Handle, error) {
	h, err := d.Driver.Recover(ctx, s)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.recovers++
	d.mu.Unlock()
	return &stopRecorder{Handle: h, d: d}, nil
}

func (d *countingDriver) startOrder() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.order...)
}

func (d *countingDriver) stopTimes() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Time(nil), d.stops...)
}

type stopRecorder struct {
	driver.Handle
	d *countingDriver
}

func (h *stopRecorder) Stop(ctx context.Context) error {
	h.d.mu.Lock()
	h.d.stops = append(h.d.stops, time.Now())
	h.d.mu.Unlock()
	return h.Handle.Stop(ctx)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// job returns a one-group job of jobType whose tasks run the mock driver
// with the given configs.
func job(jobType string, rp events.RestartPolicy, tasks ...events.Task) *events.Job {
	for i := range tasks {
		tasks[i].Driver = "mock"
		if tasks[i].KillTimeout == 0 {
			tasks[i].KillTimeout = time.Second
		}
	}
	return &events.Job{ID: "web", Name: "web", Namespace: "default", Type: jobType, Version: 1,
		TaskGroups: []events.TaskGroup{{Name: "web", Count: 1, RestartPolicy: &rp, Tasks: tasks}}}
}

func alloc(id string) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", Name: "web.web[0]", JobID: "web", JobVersion: 1,
		TaskGroup: "web", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}
}

type harness struct {
	t       *testing.T
	root    string
	store   *state.Store
	drv     *countingDriver
	changes chan string
}

func newHarness(t *testing.T) *harness {
	dir := t.TempDir()
	st, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, root: dir + "/alloc", store: st, drv: newCountingDriver(t), changes: make(chan string, 1024)}
}

func (h *harness) runner(a events.Allocation, j *events.Job, restored *state.Alloc) *allocrunner.Runner {
	h.t.Helper()
	r, err := allocrunner.New(allocrunner.Config{Alloc: a, Job: j, Restored: restored,
		Drivers: map[string]driver.Driver{"mock": h.drv}, Root: h.root, Store: h.store, Logger: quiet(),
		OnChange: func(id string) {
			select {
			case h.changes <- id:
			default:
			}
		}})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// start runs r until the test ends, when its tasks are killed, or until
// stop detaches it (as a client shutting down does), leaving them running.
func start(t *testing.T, r *allocrunner.Runner) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx) })
	stop = func() { cancel(); wg.Wait() }
	t.Cleanup(func() {
		r.Kill(events.TaskEvent{Type: events.TaskEventKilling}, false)
		<-r.Done()
		stop()
	})
	return stop
}

func eventTypes(ts *events.TaskState) []string {
	var out []string
	for _, e := range ts.Events {
		out = append(out, e.Type)
	}
	return out
}

func status(r *allocrunner.Runner) (events.AllocClientUpdate, string) {
	u, _ := r.ClientUpdate()
	return u, u.ClientStatus
}

// A task that keeps failing is restarted Attempts times after Delay, then
// fails, and the allocation with it.
func TestRestartsThenFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		rp := events.RestartPolicy{Attempts: 2, Interval: time.Hour, Delay: 10 * time.Second, Mode: "fail"}
		r := h.runner(alloc("a1"), job("service", rp, events.Task{Name: "web",
			Config: events.TaskConfig{"run_for": "5s", "exit_code": int64(1)}}), nil)
		t0 := time.Now()
		start(t, r)
		<-r.Done()
		u, st := status(r)
		if st != events.AllocClientFailed {
			t.Fatalf("status %s", st)
		}
		ts := u.TaskStates["web"]
		if ts.State != events.TaskStateDead || !ts.Failed || ts.Restarts != 2 {
			t.Errorf("task state %+v", ts)
		}
		want := []string{"Received", "Task Setup", "Started", "Terminated", "Restarting", "Started", "Terminated",
			"Restarting", "Started", "Terminated", "Not Restarting"}
		if got := eventTypes(ts); len(got) != len(want) || got[len(got)-1] != want[len(want)-1] || got[4] != "Restarting" {
			t.Errorf("events %v, want %v", got, want)
		}
		if got := h.drv.startOrder(); len(got) != 3 || got[0] != "a1-web-0" || got[2] != "a1-web-2" {
			t.Errorf("starts %v", got)
		}
		// Three runs of 5s and two delays of 10s to 12.5s.
		if el := time.Since(t0); el < 35*time.Second || el > 40*time.Second {
			t.Errorf("took %v", el)
		}
		for _, e := range ts.Events {
			if e.Type == "Terminated" && e.ExitCode != 1 {
				t.Errorf("terminated event %+v", e)
			}
		}
	})
}

// A successful batch task completes; its allocation is complete.
func TestBatchCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		r := h.runner(alloc("b1"), job("batch", allocrunner.DefaultRestartPolicy("batch"),
			events.Task{Name: "a", Config: events.TaskConfig{"run_for": "1s"}},
			events.Task{Name: "b", Config: events.TaskConfig{"run_for": "3s"}}), nil)
		start(t, r)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if _, st := status(r); st != events.AllocClientRunning {
			t.Fatalf("status %s while b runs", st)
		}
		<-r.Done()
		if u, st := status(r); st != events.AllocClientComplete || u.TaskStates["a"].Failed {
			t.Fatalf("status %s: %+v", st, u.TaskStates)
		}
		if !r.Terminal() {
			t.Error("not terminal")
		}
	})
}

// A failed task kills its siblings.
func TestSiblingFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		rp := events.RestartPolicy{Attempts: 0, Interval: time.Hour, Delay: time.Second, Mode: "fail"}
		r := h.runner(alloc("s1"), job("service", rp,
			events.Task{Name: "bad", Config: events.TaskConfig{"run_for": "1s", "exit_code": int64(2)}},
			events.Task{Name: "good", Config: events.TaskConfig{"run_for": "1h"}, ShutdownDelay: time.Minute}), nil)
		start(t, r)
		<-r.Done()
		u, st := status(r)
		if st != events.AllocClientFailed || u.TaskStates["good"].State != "dead" || u.TaskStates["good"].Failed {
			t.Fatalf("status %s: %+v", st, u.TaskStates["good"])
		}
		if got := eventTypes(u.TaskStates["good"]); got[len(got)-2] != events.TaskEventSiblingFailed || got[len(got)-1] != "Killed" {
			t.Errorf("good's events %v", got)
		}
	})
}

// A stopped allocation's tasks wait their shutdown delay before the kill
// signal, unless the stop says NoShutdownDelay (N23).
func TestStopShutdownDelay(t *testing.T) {
	for _, noDelay := range []bool{false, true} {
		t.Run(map[bool]string{false: "delay", true: "no_shutdown_delay"}[noDelay], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t)
				j := job("service", allocrunner.DefaultRestartPolicy("service"),
					events.Task{Name: "web", Config: events.TaskConfig{"run_for": "1h"}, ShutdownDelay: 7 * time.Second})
				a := alloc("d1")
				r := h.runner(a, j, nil)
				start(t, r)
				time.Sleep(time.Second)
				synctest.Wait()
				if _, st := status(r); st != events.AllocClientRunning {
					t.Fatalf("status %s", st)
				}
				a.DesiredStatus = events.AllocDesiredStop
				if noDelay {
					a.DesiredTransition.NoShutdownDelay = &noDelay
				}
				stopAt := time.Now()
				r.Update(a, nil)
				<-r.Done()
				stops := h.drv.stopTimes()
				if len(stops) != 1 {
					t.Fatalf("%d stops", len(stops))
				}
				want := 7 * time.Second
				if noDelay {
					want = 0
				}
				if got := stops[0].Sub(stopAt); got != want {
					t.Errorf("stop sent after %v, want %v", got, want)
				}
				u, st := status(r)
				if st != events.AllocClientComplete {
					t.Fatalf("status %s", st)
				}
				evs := eventTypes(u.TaskStates["web"])
				if evs[len(evs)-1] != "Killed" {
					t.Errorf("events %v", evs)
				}
			})
		})
	}
}

// A client that stops leaves its tasks running; a new runner from the
// stored record re-attaches and starts nothing.
func TestRestoreReattaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		j := job("service", allocrunner.DefaultRestartPolicy("service"), events.Task{Name: "web", Config: events.TaskConfig{"run_for": "1m"}})
		r := h.runner(alloc("r1"), j, nil)
		stop := start(t, r)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		stop()

		recs, _, err := h.store.Allocs()
		if err != nil || len(recs) != 1 || recs[0].Tasks["web"].Handle == nil {
			t.Fatalf("stored %+v, %v", recs, err)
		}
		r2 := h.runner(recs[0].Alloc, nil, recs[0])
		start(t, r2)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if _, st := status(r2); st != events.AllocClientRunning {
			t.Fatalf("status %s after restore", st)
		}
		if n := len(h.drv.startOrder()); n != 1 || h.drv.recovers != 1 {
			t.Fatalf("%d starts, %d recovers", n, h.drv.recovers)
		}
		// The recovered task exits at its original start + run_for, and
		// the service restarts it as attempt 1.
		time.Sleep(50 * time.Second)
		synctest.Wait()
		rec, _ := r2.TaskRecord("web")
		if got := h.drv.startOrder(); len(got) != 1 || rec.Attempt != 1 || rec.State.Restarts != 1 {
			t.Fatalf("starts %v, record %+v", got, rec)
		}
	})
}

// A task found gone after a restart is reported with a lost event and
// restarted per the policy as the next attempt; an attempt that was
// recorded as starting when the client stopped is never started again.
func TestRestoreLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		rp := events.RestartPolicy{Attempts: 3, Interval: time.Hour, Delay: time.Second, Mode: "fail"}
		j := job("service", rp,
			events.Task{Name: "gone", Config: events.TaskConfig{"run_for": "10s"}},
			events.Task{Name: "starting", Config: events.TaskConfig{"run_for": "1h"}})
		r := h.runner(alloc("l1"), j, nil)
		stop := start(t, r)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		stop()
		time.Sleep(time.Minute) // "gone" ended while the client was down

		recs, _, _ := h.store.Allocs()
		rec := recs[0]
		// Pretend the client died between recording "starting"'s attempt
		// and storing its handle.
		rec.Tasks["starting"].Starting, rec.Tasks["starting"].Handle = true, nil
		r2 := h.runner(rec.Alloc, nil, rec)
		start(t, r2)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		u, st := status(r2)
		if st != events.AllocClientRunning {
			t.Fatalf("status %s", st)
		}
		for _, name := range []string{"gone", "starting"} {
			ts := u.TaskStates[name]
			var lost bool
			for _, e := range ts.Events {
				lost = lost || (e.Type == "Terminated" && e.Message == "task lost while the client was down")
			}
			if !lost || ts.Restarts != 1 || ts.State != "running" {
				t.Errorf("%s: lost %v, %+v", name, lost, ts)
			}
		}
		got := h.drv.startOrder()
		want := map[string]int{"l1-gone-0": 1, "l1-starting-0": 1, "l1-gone-1": 1, "l1-starting-1": 1}
		if len(got) != 4 {
			t.Fatalf("starts %v", got)
		}
		for _, id := range got {
			if want[id] != 1 {
				t.Errorf("unexpected start %s (all: %v)", id, got)
			}
		}
		r2.Kill(events.TaskEvent{Type: events.TaskEventKilling}, false)
		<-r2.Done()
		time.Sleep(2 * time.Hour) // the orphaned first attempt of "starting" ends
	})
}

// Deployment health: healthy once every task has run min_healthy_time;
// unhealthy when a task fails first.
func TestDeploymentHealth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		task    events.TaskConfig
		healthy bool
		after   time.Duration
	}{
		{"healthy", events.TaskConfig{"run_for": "1h"}, true, 10 * time.Second},
		{"unhealthy", events.TaskConfig{"run_for": "3s", "exit_code": int64(1)}, false, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t)
				rp := events.RestartPolicy{Attempts: 0, Interval: time.Hour, Delay: time.Second, Mode: "fail"}
				j := job("service", rp, events.Task{Name: "web", Config: tc.task})
				j.TaskGroups[0].Update = &events.UpdateStrategy{MaxParallel: 1, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
				a := alloc("h1")
				a.DeploymentID = "dep-1"
				a.DeploymentStatus = &events.AllocDeploymentStatus{Canary: true}
				r := h.runner(a, j, nil)
				t0 := time.Now()
				start(t, r)
				var ds *events.AllocDeploymentStatus
				for ds == nil || ds.Healthy == nil {
					<-h.changes
					u, _ := r.ClientUpdate()
					ds = u.DeploymentStatus
				}
				if *ds.Healthy != tc.healthy || !ds.Canary || time.Unix(0, ds.Timestamp).Sub(t0) != tc.after {
					t.Errorf("deployment status healthy=%v canary=%v after %v", *ds.Healthy, ds.Canary, time.Unix(0, ds.Timestamp).Sub(t0))
				}
			})
		})
	}
}

// A NoShutdownDelay that arrives while a task waits its shutdown delay
// ends the wait (N23).
func TestNoShutdownDelayDuringTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		j := job("service", allocrunner.DefaultRestartPolicy("service"),
			events.Task{Name: "web", Config: events.TaskConfig{"run_for": "1h"}, ShutdownDelay: time.Minute})
		a := alloc("w1")
		r := h.runner(a, j, nil)
		start(t, r)
		time.Sleep(time.Second)
		a.DesiredStatus = events.AllocDesiredStop
		r.Update(a, nil)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if len(h.drv.stopTimes()) != 0 {
			t.Fatal("stopped before the shutdown delay")
		}
		yes := true
		a.DesiredTransition.NoShutdownDelay = &yes
		skipAt := time.Now()
		r.Update(a, nil)
		<-r.Done()
		if stops := h.drv.stopTimes(); len(stops) != 1 || !stops[0].Equal(skipAt) {
			t.Fatalf("stops %v, want one at %v", stops, skipAt)
		}
	})
}
