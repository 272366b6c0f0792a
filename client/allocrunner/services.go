package allocrunner

import (
	"fmt"
	"sync"
	"time"

	"github.com/ordoplane/ordo/events"
)

// ServiceHooks makes the service hook of each allocation;
// client/services.Manager implements it.
type ServiceHooks interface {
	// ForAlloc returns the hook of the allocation r runs.
	ForAlloc(r *Runner) ServiceHook
}

// ServiceHook registers an allocation's services and runs their checks.
// The runner calls it with no lock of its own held, except ChecksHealthy.
type ServiceHook interface {
	// Update gives the allocation's current state: after every task
	// change, every update from the servers and before a kill.
	Update(v ServiceView)
	// ChecksHealthy reports whether the allocation has checks that count
	// for deployment health (on_update not "ignore") and whether all of
	// them pass. It must not call back into the runner.
	ChecksHealthy() (counted, passing bool)
	// Close stops the checks. With deregister (every task is dead for
	// good) the allocation's registrations are removed; without (the
	// client is stopping and leaves the tasks running) they are kept.
	Close(deregister bool)
}

// ServiceView is an allocation as its service hook sees it.
type ServiceView struct {
	Alloc events.Allocation
	Job   *events.Job
	// Tasks are the group's tasks by name.
	Tasks map[string]ServiceTask
	// Stopping is set once the allocation is being killed: its services
	// are deregistered before the tasks' shutdown delay.
	Stopping bool
}

// ServiceTask is one task of a ServiceView.
type ServiceTask struct {
	// Running is a task with a running attempt that is not being
	// stopped.
	Running bool
	// StartedAt is when the running attempt started (check_restart's
	// grace counts from it).
	StartedAt time.Time
	// Env and Dir are the task's environment and working directory, for
	// interpolation and script checks.
	Env map[string]string
	Dir string
}

// serviceState is the runner's side of its service hook.
type serviceState struct {
	hook ServiceHook
	mu   sync.Mutex
	// stopping are tasks being killed; killing marks the whole allocation.
	stopping map[string]bool
	killing  bool
	// checkRestart are tasks whose restart was asked by check_restart: it
	// counts against the restart policy.
	checkRestart map[string]bool
}

// syncServices gives the service hook the allocation's current state.
func (r *Runner) syncServices() {
	if r.svc.hook == nil {
		return
	}
	r.svc.hook.Update(r.serviceView())
}

// serviceView builds the hook's view of the allocation.
func (r *Runner) serviceView() ServiceView {
	r.svc.mu.Lock()
	stopping := make(map[string]bool, len(r.svc.stopping))
	for k, v := range r.svc.stopping {
		stopping[k] = v
	}
	killing := r.svc.killing
	r.svc.mu.Unlock()

	r.mu.Lock()
	a, job := r.mu.rec.Alloc, r.mu.rec.Job
	recs := make(map[string]struct {
		running bool
		started int64
		attempt int
	}, len(r.mu.rec.Tasks))
	for name, t := range r.mu.rec.Tasks {
		recs[name] = struct {
			running bool
			started int64
			attempt int
		}{t.State.State == events.TaskStateRunning && t.Handle != nil && !t.Done, t.State.StartedAt, t.Attempt}
	}
	r.mu.Unlock()

	v := ServiceView{Alloc: a, Job: job, Tasks: map[string]ServiceTask{}, Stopping: killing || a.ServerTerminal()}
	for _, tr := range r.tasks {
		rec := recs[tr.task.Name]
		st := ServiceTask{Running: rec.running && !stopping[tr.task.Name]}
		if st.Running {
			cfg := tr.taskConfig(rec.attempt)
			st.Env, st.Dir = cfg.Env, cfg.Dir
		}
		if rec.started > 0 {
			st.StartedAt = time.Unix(0, rec.started)
		}
		v.Tasks[tr.task.Name] = st
	}
	return v
}

// servicesStopping deregisters task's services (and the group's, the
// allocation being stopped) before it is killed, so that traffic drains
// during its shutdown delay, as Nomad does.
func (r *Runner) servicesStopping(task string, alloc bool) {
	if r.svc.hook == nil {
		return
	}
	r.svc.mu.Lock()
	if r.svc.stopping == nil {
		r.svc.stopping = map[string]bool{}
	}
	r.svc.stopping[task] = true
	r.svc.killing = r.svc.killing || alloc
	r.svc.mu.Unlock()
	r.syncServices()
}

// closeServices stops the hook's checks; deregister when every task is
// dead for good.
func (r *Runner) closeServices(deregister bool) {
	if r.svc.hook != nil {
		r.svc.hook.Close(deregister)
	}
}

// checksHealthy is the hook's answer for deployment health: counted is
// false when no check counts (or there is no hook).
func (r *Runner) checksHealthy() (counted, passing bool) {
	if r.svc.hook == nil {
		return false, false
	}
	return r.svc.hook.ChecksHealthy()
}

// ChecksChanged tells the runner a check's status changed, so that the
// deployment health is looked at again.
func (r *Runner) ChecksChanged() { r.wake() }

// RestartUnhealthy restarts task for check_restart: recorded as Restart
// Signaled with reason, the driver's Stop, then the restart policy as
// for a failure (it counts against its attempts, and may fail the task),
// as Nomad does.
func (r *Runner) RestartUnhealthy(task, reason string) error {
	trs, err := r.runningTasks(task)
	if err != nil {
		return err
	}
	tr := trs[0]
	r.svc.mu.Lock()
	if r.svc.checkRestart == nil {
		r.svc.checkRestart = map[string]bool{}
	}
	if r.svc.checkRestart[task] {
		r.svc.mu.Unlock()
		return nil // one is pending
	}
	r.svc.checkRestart[task] = true
	r.svc.mu.Unlock()
	select {
	case tr.restartCh <- events.TaskEvent{Type: events.TaskEventRestartSignaled, Message: reason}:
	default:
		r.svc.mu.Lock()
		delete(r.svc.checkRestart, task)
		r.svc.mu.Unlock()
		return fmt.Errorf("task %q: a restart is already pending", task)
	}
	return nil
}

// takeCheckRestart reports (and forgets) whether task's pending restart
// was asked by check_restart.
func (r *Runner) takeCheckRestart(task string) bool {
	r.svc.mu.Lock()
	defer r.svc.mu.Unlock()
	ok := r.svc.checkRestart[task]
	delete(r.svc.checkRestart, task)
	return ok
}

// TaskExecEnv returns task's environment and working directory, for a
// script check run beside a task whose driver cannot exec.
func (r *Runner) TaskExecEnv(task string) (map[string]string, string, error) {
	for _, tr := range r.tasks {
		if tr.task.Name == task {
			cfg := tr.taskConfig(tr.record().Attempt)
			return cfg.Env, cfg.Dir, nil
		}
	}
	return nil, "", fmt.Errorf("task %q: %w", task, ErrNoSuchTask)
}
