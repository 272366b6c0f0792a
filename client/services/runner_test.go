package services_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/driver"
	execdriver "github.com/ordoplane/ordo/client/driver/exec"
	"github.com/ordoplane/ordo/client/services"
	"github.com/ordoplane/ordo/client/state"
	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/events"
)

// python returns the python3 interpreter (not a shim), or skips.
func python(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("python3 is not available:", err)
	}
	return strings.TrimSpace(string(out))
}

// freePort returns a port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// webRig runs one allocation whose task "web" is python's HTTP server
// serving its task directory on a port, with service "web" and an http
// check of /ready (absent until the test writes it), on a fake clock.
type webRig struct {
	t    *testing.T
	clk  *clocktest.Clock
	m    *services.Manager
	r    *allocrunner.Runner
	port int
	dir  string
}

func newWebRig(t *testing.T, tg events.TaskGroup, check events.ServiceCheck) *webRig {
	py := python(t)
	port := freePort(t)
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	m, err := services.New(services.Config{Servers: &fakeServers{}, Node: func() events.Node { return *testNode() },
		Clock: clk, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	drv, err := execdriver.New(execdriver.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	tg.Name = "api"
	tg.Count = 1
	tg.Tasks = []events.Task{{Name: "web", Driver: "exec", KillTimeout: 2 * time.Second, ShutdownDelay: tg.Tasks[0].ShutdownDelay,
		Config:   events.TaskConfig{"command": py, "args": []any{"-m", "http.server", strconv.Itoa(port), "--bind", "127.0.0.1"}},
		Services: []events.Service{{Name: "web", PortLabel: "http", Checks: []events.ServiceCheck{check}}}}}
	job := &events.Job{ID: "web", Name: "web", Namespace: "default", Type: events.JobTypeService, Version: 1,
		TaskGroups: []events.TaskGroup{tg}}
	a := events.Allocation{ID: "a1", Namespace: "default", Name: "web.api[0]", JobID: "web", JobVersion: 1, TaskGroup: "api",
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending, DeploymentID: "d1",
		AllocatedResources: &events.AllocatedResources{Shared: events.AllocatedSharedResources{Ports: []events.PortMapping{
			{Label: "http", Value: port, HostIP: "127.0.0.1"}}}}}
	dataDir := t.TempDir()
	st, err := state.Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := allocrunner.New(allocrunner.Config{Alloc: a, Job: job, Drivers: map[string]driver.Driver{"exec": drv},
		Root: filepath.Join(dataDir, "alloc"), Store: st, Clock: clk, Logger: quiet(), Services: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx) })
	t.Cleanup(func() {
		r.Kill(events.TaskEvent{Type: events.TaskEventKilling}, false)
		for {
			select {
			case <-r.Done():
				cancel()
				wg.Wait()
				return
			case <-time.After(10 * time.Millisecond):
				clk.Advance(time.Second) // kill and restart waits on the fake clock
			}
		}
	})
	return &webRig{t: t, clk: clk, m: m, r: r, port: port, dir: r.Dir().TaskDir("web")}
}

// advanceUntil moves the fake clock by step until cond holds.
func (w *webRig) advanceUntil(what string, step time.Duration, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out waiting for %s", what)
		}
		w.clk.Advance(step)
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *webRig) checkStatus() string {
	regs := w.m.Registrations()
	if len(regs) != 1 {
		return "unregistered"
	}
	return regs[0].Checks[0].Status
}

func (w *webRig) task() state.Task {
	rec, _ := w.r.TaskRecord("web")
	return rec
}

func (w *webRig) health() *bool {
	u, _ := w.r.ClientUpdate()
	if u.DeploymentStatus == nil {
		return nil
	}
	return u.DeploymentStatus.Healthy
}

// The deployment health of an allocation with checks waits, past
// min_healthy_time, for its checks to pass; stopping it deregisters its
// service before the shutdown delay.
func TestDeploymentHealthWaitsForChecks(t *testing.T) {
	tg := events.TaskGroup{Update: &events.UpdateStrategy{MinHealthyTime: 2 * time.Second, HealthyDeadline: time.Hour},
		Tasks: []events.Task{{ShutdownDelay: 30 * time.Second}}}
	w := newWebRig(t, tg, events.ServiceCheck{Type: events.CheckTypeHTTP, Path: "/ready", Interval: time.Second, Timeout: time.Second})

	// The server runs (its listing answers) but /ready is a 404.
	w.advanceUntil("the check to run against the server", time.Second, func() bool { return w.checkStatus() == crit })
	regs := w.m.Registrations()
	if r := regs[0]; r.ID != "_nomad-task-a1-web-web-http" || r.Port != w.port || r.Address != "127.0.0.1" {
		t.Fatalf("registration %+v", r)
	}
	for range 10 { // well past min_healthy_time
		w.clk.Advance(time.Second)
		time.Sleep(5 * time.Millisecond)
	}
	if h := w.health(); h != nil {
		t.Fatalf("deployment health decided (%v) while the check is critical", *h)
	}

	if err := os.WriteFile(filepath.Join(w.dir, "ready"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.advanceUntil("healthy", time.Second, func() bool { h := w.health(); return h != nil && *h })
	if st := w.checkStatus(); st != pass {
		t.Fatalf("healthy with the check %s", st)
	}

	// A stop deregisters at once; the task runs out its shutdown delay.
	w.r.Update(func() events.Allocation {
		a := w.r.Alloc()
		a.DesiredStatus = events.AllocDesiredStop
		return a
	}(), nil)
	if regs := w.m.Registrations(); len(regs) != 0 {
		t.Fatalf("registered during the shutdown delay: %+v", regs)
	}
	if rec := w.task(); rec.State.State != events.TaskStateRunning {
		t.Fatalf("task %s before its shutdown delay ended", rec.State.State)
	}
	w.advanceUntil("the task killed", time.Second, func() bool { return w.task().State.State == events.TaskStateDead })
}

// check_restart restarts a task whose check keeps failing, within limit,
// and the restarts count against the restart policy.
func TestCheckRestart(t *testing.T) {
	tg := events.TaskGroup{RestartPolicy: &events.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: time.Second, Mode: "fail"},
		Update: &events.UpdateStrategy{MinHealthyTime: time.Second, HealthyDeadline: time.Hour}, Tasks: []events.Task{{}}}
	w := newWebRig(t, tg, events.ServiceCheck{Name: "ready", Type: events.CheckTypeHTTP, Path: "/ready",
		Interval: time.Second, Timeout: time.Second, CheckRestart: &events.CheckRestart{Limit: 3, Grace: 2 * time.Second}})

	w.advanceUntil("a restart", time.Second, func() bool { return w.task().State.Restarts == 1 })
	var signaled, terminated bool
	for _, e := range w.task().State.Events {
		switch e.Type {
		case events.TaskEventRestartSignaled:
			signaled = e.Message == `healthcheck: check "ready" unhealthy`
		case events.TaskEventTerminated:
			terminated = true
		}
	}
	if !signaled || !terminated {
		t.Fatalf("events %+v", w.task().State.Events)
	}
	// The policy allows one restart: the next failing round fails the task.
	w.advanceUntil("the task failed", time.Second, func() bool { return w.task().State.Failed })
	last := w.task().State.Events[len(w.task().State.Events)-1]
	if last.Type != events.TaskEventNotRestarting || last.Message != "Exceeded allowed attempts" {
		t.Fatalf("last event %+v", last)
	}
	w.advanceUntil("unhealthy", time.Second, func() bool { h := w.health(); return h != nil && !*h })
}
