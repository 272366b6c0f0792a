package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// sigkill is SIGKILL's number.
const sigkill = 9

// ErrContainerGone is set in the ExitResult of a task whose container was
// removed behind the driver's back, so its exit status is unknown.
var ErrContainerGone = errors.New("docker: the task's container was removed; exit status unknown")

// handle is a task's container.
type handle struct {
	d *Driver
	t task
	// done is closed, result set, when the container has exited.
	done   chan struct{}
	result driver.ExitResult
}

var _ driver.Handle = (*handle)(nil)

func newHandle(d *Driver, t task) *handle {
	return &handle{d: d, t: t, done: make(chan struct{})}
}

// Wait implements driver.Handle.
func (h *handle) Wait(ctx context.Context) (driver.ExitResult, error) {
	res, err := driver.WaitExit(ctx, h.done, &h.result)
	if err != nil {
		return res, fmt.Errorf("docker: wait for task %s: %w", h.t.id, err)
	}
	return res, nil
}

// Signal implements driver.Handle: sig goes to the container's main
// process.
func (h *handle) Signal(sig string) error {
	n, err := driver.ParseSignal(sig)
	if err != nil {
		return fmt.Errorf("docker: signal task %s: %w", h.t.id, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.d.cfg.FingerprintTimeout*5)
	defer cancel()
	if err := h.d.api.kill(ctx, h.t.container, n); err != nil {
		return fmt.Errorf("docker: signal task %s: %w", h.t.id, err)
	}
	return nil
}

// Stop implements driver.Handle: the kill signal, then, after the kill
// timeout, SIGKILL; the driver times the timeout itself rather than the
// daemon's stop, so that it runs on the driver's clock.
func (h *handle) Stop(ctx context.Context) error {
	select {
	case <-h.done:
		return nil
	default:
	}
	if err := h.kill(ctx, h.t.killSignal); err != nil {
		return fmt.Errorf("docker: stop task %s: %w", h.t.id, err)
	}
	timer := h.d.cfg.Clock.NewTimer(h.t.killTimeout)
	defer timer.Stop()
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("docker: stop task %s: %w", h.t.id, ctx.Err())
	case <-timer.C():
	}
	if err := h.kill(ctx, sigkill); err != nil {
		return fmt.Errorf("docker: kill task %s: %w", h.t.id, err)
	}
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("docker: stop task %s: %w", h.t.id, ctx.Err())
	}
}

// kill sends sig to the container for Stop: a container no longer running
// is no error, and a daemon that cannot be reached (restarting, say) is
// asked again every RetryInterval until the task exits or ctx ends, since
// a Stop that gave up would leave the task running with nobody to stop
// it. An answer of the daemon's other than success is an error.
func (h *handle) kill(ctx context.Context, sig int) error {
	for {
		err := h.d.api.kill(ctx, h.t.container, sig)
		var ae *apiError
		switch {
		case err == nil, isNotRunning(err):
			return nil
		case errors.As(err, &ae), ctx.Err() != nil:
			return err
		}
		h.d.cfg.Logger.Warn("docker: signal a container: daemon unreachable, trying again", "task", h.t.id, "err", err)
		timer := h.d.cfg.Clock.NewTimer(h.d.cfg.RetryInterval)
		select {
		case <-timer.C():
		case <-h.done:
			timer.Stop()
			return nil
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

// State implements driver.Handle.
func (h *handle) State() driver.HandleState { return h.t.state() }

// run is the goroutine, one per handle, that follows the container's logs
// into the task's log files from since, waits for the container to exit,
// removes it, and reports the exit. It ends early, reporting nothing and
// leaving the container, when the driver closes.
func (h *handle) run(since string) {
	defer h.d.watchers.Done()
	ctx := h.d.ctx
	var logs sync.WaitGroup
	logs.Go(func() { h.followLogs(ctx, since) })
	defer logs.Wait()
	code, err := h.waitExit(ctx)
	if ctx.Err() != nil {
		return
	}
	defer h.d.releaseImage(h.t.image) // imagegc.go
	// The log stream ends once the container has stopped: everything it
	// wrote is in the files before the exit is reported.
	logs.Wait()
	res := exitResult(code)
	if err != nil {
		res = driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("task %s (container %s): %w", h.t.id, h.t.container, err)}
	} else if info, ierr := h.d.api.inspect(ctx, h.t.container); ierr == nil {
		res.OOMKilled = info.State.OOMKilled
	}
	if !h.d.cfg.KeepContainers {
		if rerr := h.d.api.remove(ctx, h.t.container); rerr != nil {
			h.d.cfg.Logger.Warn("docker: remove an exited container", "task", h.t.id, "container", h.t.container, "err", rerr)
		}
	}
	h.result = res
	close(h.done)
}

// waitExit waits for the container to stop and returns its exit status;
// ErrContainerGone when it was removed. It asks again, every
// RetryInterval, a daemon that does not answer, until ctx ends.
func (h *handle) waitExit(ctx context.Context) (int, error) {
	for {
		code, err := h.d.api.wait(ctx, h.t.container)
		switch {
		case err == nil:
			return code, nil
		case errors.Is(err, errNotFound):
			return -1, ErrContainerGone
		case ctx.Err() != nil:
			return -1, ctx.Err()
		}
		h.d.cfg.Logger.Warn("docker: wait for a container", "task", h.t.id, "container", h.t.container, "err", err)
		timer := h.d.cfg.Clock.NewTimer(h.d.cfg.RetryInterval)
		select {
		case <-timer.C():
		case <-ctx.Done():
			timer.Stop()
			return -1, ctx.Err()
		}
	}
}

// followLogs copies the container's output into the task's log files
// until the container stops or ctx ends.
func (h *handle) followLogs(ctx context.Context, since string) {
	stdout, err := openLogFile(h.t.logs.stdout, h.t.logs.maxBytes, h.t.logs.maxFiles)
	if err != nil {
		h.d.cfg.Logger.Warn("docker: open the task's stdout log", "task", h.t.id, "err", err)
		return
	}
	defer stdout.Close()
	stderr, err := openLogFile(h.t.logs.stderr, h.t.logs.maxBytes, h.t.logs.maxFiles)
	if err != nil {
		h.d.cfg.Logger.Warn("docker: open the task's stderr log", "task", h.t.id, "err", err)
		return
	}
	defer stderr.Close()
	var last time.Time
	err = h.d.api.logs(ctx, h.t.container, since, stdout, stderr, func(ts time.Time) { last = ts })
	if ctx.Err() != nil {
		// The driver is closing, the task running on: the next client
		// process resumes after the last message written.
		if err := saveSince(h.t.logs.stdout, last); err != nil {
			h.d.cfg.Logger.Warn("docker: save where the task's logs stop", "task", h.t.id, "err", err)
		}
		return
	}
	if err != nil {
		h.d.cfg.Logger.Warn("docker: follow the task's logs", "task", h.t.id, "container", h.t.container, "err", err)
	}
}

// exitResult turns a container's exit status into an ExitResult: a
// status above 128 is read, as Docker reports it, as death by signal
// status-128 (so a task exiting by itself with such a status reads as
// signalled too).
func exitResult(code int) driver.ExitResult {
	if code > 128 && code <= 128+64 {
		return driver.ExitResult{ExitCode: code, Signal: code - 128}
	}
	return driver.ExitResult{ExitCode: code}
}
