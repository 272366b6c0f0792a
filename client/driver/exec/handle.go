package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/ordoplane/ordo/client/driver"
)

// sigkill is SIGKILL's number.
const sigkill = 9

// errExited is returned when signalling a task that has exited.
var errExited = errors.New("exec: task has exited")

// handle is a running exec task: either this client's child (proc set),
// waited on by waitChild, or a recovered process, polled by watch.
type handle struct {
	d    *Driver
	t    task
	proc *os.Process
	// done is closed, result set, when the task has exited.
	done   chan struct{}
	result driver.ExitResult
	// rotating is held through a rotation pass and by exit, so that once
	// done is closed no rotation is under way or to come: a caller that
	// waited for the exit reads the log files whole.
	rotating sync.Mutex
	mu       struct {
		sync.Mutex
		// reaped is set once the child is reaped: its pid may then be
		// reused, so it is never signalled again.
		reaped bool
	}
}

var _ driver.Handle = (*handle)(nil)

func newHandle(d *Driver, t task, proc *os.Process) *handle {
	return &handle{d: d, t: t, proc: proc, done: make(chan struct{})}
}

// Wait implements driver.Handle.
func (h *handle) Wait(ctx context.Context) (driver.ExitResult, error) {
	res, err := driver.WaitExit(ctx, h.done, &h.result)
	if err != nil {
		return res, fmt.Errorf("exec: wait for task %s: %w", h.t.id, err)
	}
	return res, nil
}

// Signal implements driver.Handle: sig goes to the task's main process
// only (Stop signals its whole process group).
func (h *handle) Signal(sig string) error {
	n, err := driver.ParseSignal(sig)
	if err != nil {
		return fmt.Errorf("exec: signal task %s: %w", h.t.id, err)
	}
	if err := h.send(n, false); err != nil {
		return fmt.Errorf("exec: signal task %s: %w", h.t.id, err)
	}
	return nil
}

// Stop implements driver.Handle: the kill signal goes to the task's
// process group, then, after the kill timeout, SIGKILL.
func (h *handle) Stop(ctx context.Context) error {
	select {
	case <-h.done:
		return nil
	default:
	}
	if err := h.send(h.t.killSignal, true); err != nil && !errors.Is(err, errExited) {
		return fmt.Errorf("exec: stop task %s: %w", h.t.id, err)
	}
	timer := h.d.cfg.Clock.NewTimer(h.t.killTimeout)
	defer timer.Stop()
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("exec: stop task %s: %w", h.t.id, ctx.Err())
	case <-timer.C():
	}
	if err := h.send(sigkill, true); err != nil && !errors.Is(err, errExited) {
		return fmt.Errorf("exec: kill task %s: %w", h.t.id, err)
	}
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("exec: stop task %s: %w", h.t.id, ctx.Err())
	}
}

// State implements driver.Handle.
func (h *handle) State() driver.HandleState { return h.t.state() }

// send delivers signal sig to the task's main process, or to its process
// group; errExited if the task has exited.
func (h *handle) send(sig int, group bool) error {
	if h.proc != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.mu.reaped {
			return errExited
		}
		return signalProcess(h.t.pid, sig, group)
	}
	// Not our child: check the pid is still the task's right before
	// signalling it (a pid reused in between is left to chance, as with
	// any kill by pid).
	if running, err := h.running(); err != nil {
		return err
	} else if !running {
		return errExited
	}
	return signalProcess(h.t.pid, sig, group)
}

// running reports whether the task's process is alive and is the task's.
func (h *handle) running() (bool, error) {
	info, err := procStat(h.t.pid)
	if errors.Is(err, errNoProcess) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !info.exited() && info.startTicks == h.t.startTicks, nil
}

// waitChild is the goroutine, one per started task, that waits for the
// child to exit, kills what is left of its process group and reaps it. It
// ends when the child exits (Close does not end it: the child is this
// process's to reap).
func (h *handle) waitChild() {
	err := waitExited(h.t.pid)
	h.mu.Lock()
	if err == nil {
		// The leader is a zombie, so its pid still names the group:
		// kill the processes it left behind.
		_ = signalProcess(h.t.pid, sigkill, true)
	}
	ps, werr := h.proc.Wait()
	h.mu.reaped = true
	h.mu.Unlock()
	h.exit(exitResult(ps, werr))
}

// exit records the task's result and closes done, after any rotation pass
// under way has finished.
func (h *handle) exit(res driver.ExitResult) {
	h.rotating.Lock()
	defer h.rotating.Unlock()
	h.result = res
	close(h.done)
}

// watch is the goroutine, one per recovered task, that polls the process
// every PollInterval until it is gone or the driver closes.
func (h *handle) watch() {
	defer h.d.watchers.Done()
	for {
		running, err := h.running()
		if err != nil {
			h.d.cfg.Logger.Warn("exec: poll task process", "task", h.t.id, "pid", h.t.pid, "err", err)
		} else if !running {
			break
		}
		timer := h.d.cfg.Clock.NewTimer(h.d.cfg.PollInterval)
		select {
		case <-timer.C():
		case <-h.d.closing:
			timer.Stop()
			return
		}
	}
	// Kill what is left of the process group, unless the pid, and so
	// possibly the group id, already names another process.
	if _, err := procStat(h.t.pid); errors.Is(err, errNoProcess) {
		_ = signalProcess(h.t.pid, sigkill, true)
	}
	h.exit(driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("task %s (pid %d): %w", h.t.id, h.t.pid, ErrExitUnknown)})
}

// rotateLogs is the goroutine, one per task, that checks the task's log
// files every LogCheckInterval and rotates those that reached LogMaxBytes,
// until the task exits or the driver closes.
func (h *handle) rotateLogs() {
	defer h.d.watchers.Done()
	if h.t.logs.maxBytes <= 0 {
		return
	}
	for {
		timer := h.d.cfg.Clock.NewTimer(h.d.cfg.LogCheckInterval)
		select {
		case <-timer.C():
		case <-h.done:
			timer.Stop()
			return
		case <-h.d.closing:
			timer.Stop()
			return
		}
		if !h.rotatePass() {
			return
		}
	}
}

// rotatePass rotates the task's full log files, unless the task has exited
// (false then).
func (h *handle) rotatePass() bool {
	h.rotating.Lock()
	defer h.rotating.Unlock()
	select {
	case <-h.done:
		return false
	default:
	}
	for _, p := range []string{h.t.logs.stdout, h.t.logs.stderr} {
		if _, err := rotateIfFull(p, h.t.logs.maxBytes, h.t.logs.maxFiles); err != nil {
			h.d.cfg.Logger.Warn("exec: rotate task log", "task", h.t.id, "err", err)
		}
	}
	return true
}
