package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/state"
	"github.com/ordoplane/ordo/events"
)

var (
	// ErrNoSuchTask is returned for a task the allocation does not have.
	ErrNoSuchTask = errors.New("allocrunner: no such task")
	// ErrTaskNotRunning is returned when a restart, signal or exec names
	// a task that is not running, or none is.
	ErrTaskNotRunning = errors.New("allocrunner: task is not running")
	// ErrExecUnsupported is returned by Exec for a task whose driver
	// cannot run commands beside it.
	ErrExecUnsupported = errors.New("allocrunner: the task's driver cannot exec")
)

// Restart restarts task as a user asks (alloc restart): its attempt is
// stopped with its kill signal and started again at once, recorded as
// Restart Signaled, Terminated, Restarting; the restart policy's count
// is untouched. With task "" every running task restarts (all, too:
// ordo has no lifecycle tasks, so every task is a main task).
func (r *Runner) Restart(task string, all bool) error {
	trs, err := r.runningTasks(task)
	if err != nil {
		return err
	}
	for _, tr := range trs {
		select {
		case tr.restartCh <- events.TaskEvent{Type: events.TaskEventRestartSignaled, Message: "User requested task to restart"}:
		default: // a restart is already pending
		}
	}
	return nil
}

// Signal sends sig (SIGHUP, SIGUSR1…) to task, or to every running task
// when task is "", recording a Signaling event first.
func (r *Runner) Signal(task, sig string) error {
	if _, err := driver.ParseSignal(sig); err != nil {
		return err
	}
	trs, err := r.runningTasks(task)
	if err != nil {
		return err
	}
	var errs []error
	for _, tr := range trs {
		h := tr.handle()
		if h == nil {
			errs = append(errs, fmt.Errorf("task %q: %w", tr.task.Name, ErrTaskNotRunning))
			continue
		}
		tr.event(events.TaskEvent{Type: events.TaskEventSignaling, Message: "Task being sent signal " + sig})
		if err := h.Signal(sig); err != nil {
			errs = append(errs, fmt.Errorf("task %q: %w", tr.task.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Exec runs req's command beside task, in the task's environment and
// working directory (Env and Dir are set here), and returns its exit
// code. task "" is the only task of a one-task allocation.
func (r *Runner) Exec(ctx context.Context, task string, req driver.ExecRequest) (int, error) {
	trs, err := r.runningTasks(task)
	if err != nil {
		return -1, err
	}
	if len(trs) != 1 {
		return -1, fmt.Errorf("%w: the allocation has %d running tasks; name one", ErrNoSuchTask, len(trs))
	}
	tr := trs[0]
	x, ok := tr.handle().(driver.Execer)
	if !ok {
		return -1, fmt.Errorf("task %q (driver %s): %w", tr.task.Name, tr.task.Driver, ErrExecUnsupported)
	}
	cfg := tr.taskConfig(tr.record().Attempt)
	req.Env, req.Dir = cfg.Env, cfg.Dir
	return x.Exec(ctx, req)
}

// TaskPIDs returns the main process of each running task whose driver
// runs it as a process group of the host, by task name.
func (r *Runner) TaskPIDs() map[string]int {
	out := map[string]int{}
	for _, tr := range r.tasks {
		if pg, ok := tr.handle().(driver.ProcessGroup); ok {
			out[tr.task.Name] = pg.PID()
		}
	}
	return out
}

// runningTasks returns task's runner, or every running task's for "",
// ErrNoSuchTask or ErrTaskNotRunning.
func (r *Runner) runningTasks(task string) ([]*taskRunner, error) {
	var out []*taskRunner
	for _, tr := range r.tasks {
		if task != "" && tr.task.Name != task {
			continue
		}
		if tr.handle() == nil {
			if task != "" {
				return nil, fmt.Errorf("task %q: %w", task, ErrTaskNotRunning)
			}
			continue
		}
		out = append(out, tr)
	}
	switch {
	case task != "" && len(out) == 0:
		return nil, fmt.Errorf("task %q: %w", task, ErrNoSuchTask)
	case len(out) == 0:
		return nil, fmt.Errorf("allocation %s: %w", r.id, ErrTaskNotRunning)
	}
	return out, nil
}

func (tr *taskRunner) setHandle(h driver.Handle) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.mu.handle = h
}

func (tr *taskRunner) handle() driver.Handle {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.mu.handle
}

// restartAttempt stops the running attempt for a user's restart: ev
// (Restart Signaled), the driver's Stop, then Terminated and Restarting
// with no delay; the next attempt starts at once.
func (tr *taskRunner) restartAttempt(ctx context.Context, h driver.Handle, ch <-chan waited, ev events.TaskEvent) (ended, bool) {
	tr.event(ev)
	w, detached := tr.stopAndWait(ctx, h, ch)
	if detached {
		return ended{}, true
	}
	if tr.r.takeCheckRestart(tr.task.Name) { // services.go: the restart policy decides
		return ended{res: w.res}, false
	}
	res := w.res
	msg := exitMessage(res)
	tr.update(func(t *state.Task, now time.Time) {
		t.Handle, t.Starting = nil, false
		appendEvent(&t.State, events.TaskEvent{Type: events.TaskEventTerminated, Time: now.UnixNano(), Message: msg,
			ExitCode: res.ExitCode, Signal: res.Signal})
		t.Attempt++
		t.State.Restarts++
		t.State.State = events.TaskStatePending
		appendEvent(&t.State, events.TaskEvent{Type: events.TaskEventRestarting, Time: now.UnixNano(),
			Message: restartingMessage(ev)})
	})
	tr.log.Info("task restarted by request", "exit_code", res.ExitCode, "signal", res.Signal)
	return ended{res: res, restarted: true}, false
}

// stopAndWait stops the running attempt through its driver (kill signal,
// kill timeout) and waits for its exit; detached is true when ctx ended
// first (or the wait failed), leaving the task to a later client.
func (tr *taskRunner) stopAndWait(ctx context.Context, h driver.Handle, ch <-chan waited) (w waited, detached bool) {
	if err := h.Stop(ctx); err != nil {
		if ctx.Err() != nil {
			return waited{}, true
		}
		tr.log.Error("stop task", "err", err)
	}
	select {
	case w = <-ch:
	case <-ctx.Done():
		return waited{}, true
	}
	return w, w.err != nil
}

// exitMessage is a Terminated event's message, as Nomad words it.
func exitMessage(res driver.ExitResult) string {
	msg := fmt.Sprintf("Exit Code: %d", res.ExitCode)
	if res.Signal != 0 {
		msg += fmt.Sprintf(", Signal: %d", res.Signal)
	}
	if res.OOMKilled {
		msg += ", OOM Killed"
	}
	if res.Err != nil {
		msg += ", " + res.Err.Error()
	}
	return msg
}
