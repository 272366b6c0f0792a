package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/state"
	"github.com/ordoplane/ordo/client/template"
	"github.com/ordoplane/ordo/events"
)

// lostMessage is the message of the event of a task found gone after a
// client restart.
const lostMessage = "task lost while the client was down"

// taskRunner runs one task of an allocation: starts, waits, restarts per
// the group's restart policy, and kills it.
type taskRunner struct {
	r    *Runner
	task events.Task
	log  *slog.Logger
	// killCh is closed by the first requestKill; skipDelayCh by
	// skipShutdownDelay.
	killCh      chan struct{}
	skipDelayCh chan struct{}
	// restartCh carries a user's restart request to the running attempt
	// (control.go).
	restartCh chan events.TaskEvent

	mu struct {
		sync.Mutex
		killed        bool
		killEvent     events.TaskEvent
		shutdownDelay bool
		skipped       bool
		// handle is the running attempt's, nil between attempts.
		handle driver.Handle
		// tmpl renders the task's templates; pendingChange is a change
		// of them made while the attempt was launching (templates.go).
		tmpl          *taskTemplates
		launching     bool
		pendingChange *template.Change
	}
}

func newTaskRunner(r *Runner, t events.Task) *taskRunner {
	return &taskRunner{r: r, task: t, log: r.log.With("task", t.Name),
		killCh: make(chan struct{}), skipDelayCh: make(chan struct{}),
		restartCh: make(chan events.TaskEvent, 1)}
}

// requestKill asks the task to stop; the first request wins.
func (tr *taskRunner) requestKill(ev events.TaskEvent, shutdownDelay bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.mu.killed {
		return
	}
	tr.mu.killed, tr.mu.killEvent, tr.mu.shutdownDelay = true, ev, shutdownDelay
	close(tr.killCh)
}

// skipShutdownDelay ends a shutdown delay being waited, or skips it.
func (tr *taskRunner) skipShutdownDelay() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if !tr.mu.skipped {
		tr.mu.skipped = true
		close(tr.skipDelayCh)
	}
}

func (tr *taskRunner) killRequest() (killed bool, ev events.TaskEvent, shutdownDelay bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.mu.killed, tr.mu.killEvent, tr.mu.shutdownDelay
}

// record returns a copy of the task's record.
func (tr *taskRunner) record() state.Task {
	t, _ := tr.r.TaskRecord(tr.task.Name)
	return t
}

func (tr *taskRunner) update(f func(t *state.Task, now time.Time)) error {
	return tr.r.updateTask(tr.task.Name, f)
}

// ended is how one attempt of the task ended.
type ended struct {
	res driver.ExitResult
	// startErr is set when the attempt did not start.
	startErr error
	// lost is a task found gone after a client restart.
	lost bool
	// killed is an attempt stopped by a kill request.
	killed bool
	// restarted is an attempt stopped by a user's restart (control.go).
	restarted bool
}

// run runs the task until it is dead for good or ctx ends.
func (tr *taskRunner) run(ctx context.Context) {
	rec := tr.record()
	if rec.Done {
		return
	}
	defer tr.stopTemplates() // templates.go
	var (
		h       driver.Handle
		pending *ended
	)
	if tr.r.cfg.Restored != nil {
		h, pending = tr.restore(ctx, rec)
		if ctx.Err() != nil {
			return
		}
		if h != nil {
			// A change the templates find before the loop below publishes
			// h waits for it (templateStarted), rather than being dropped.
			tr.launching() // templates.go
			if _, err := tr.startTemplates(ctx, true); err != nil {
				tr.log.Error("templates of a re-attached task", "err", err)
			}
		}
	}
	for {
		var end ended
		switch {
		case pending != nil:
			end, pending = *pending, nil
		case h == nil:
			if killed, ev, _ := tr.killRequest(); killed {
				tr.finishUnstarted(ev)
				return
			}
			var err error
			if h, err = tr.start(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				end = ended{startErr: err}
			}
		}
		if h != nil {
			var detached bool
			tr.setHandle(h)
			tr.templateStarted(ctx, h) // templates.go
			end, detached = tr.wait(ctx, h)
			tr.setHandle(nil)
			if detached {
				return
			}
			h = nil
		}
		if end.restarted {
			continue
		}
		if end.killed {
			return
		}
		if !tr.afterExit(ctx, end) {
			return
		}
	}
}

// restore re-attaches to the task an earlier client process ran: a
// handle, or the ended attempt of a task that is gone.
func (tr *taskRunner) restore(ctx context.Context, rec state.Task) (driver.Handle, *ended) {
	switch {
	case rec.Handle != nil:
		drv := tr.r.cfg.Drivers[rec.Handle.Driver]
		if drv == nil {
			tr.log.Warn("cannot recover task: driver missing", "driver", rec.Handle.Driver)
			break
		}
		h, err := drv.Recover(ctx, *rec.Handle)
		if err == nil {
			tr.log.Info("task re-attached", "attempt", rec.Attempt)
			tr.r.cfg.Metrics.inc(func(m *Metrics) prometheus.Counter { return m.TasksRecovered })
			return h, nil
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		if !errors.Is(err, driver.ErrTaskGone) {
			tr.log.Warn("cannot recover task", "attempt", rec.Attempt, "err", err)
		}
	case rec.Starting:
		// The client stopped between recording the attempt and learning
		// whether it started: the attempt is never started again.
	default:
		return nil, nil // never started, or waiting to restart: start it
	}
	tr.log.Warn("task lost while the client was down", "attempt", rec.Attempt)
	tr.r.cfg.Metrics.inc(func(m *Metrics) prometheus.Counter { return m.TasksLost })
	return nil, &ended{lost: true}
}

// start starts the next attempt: recorded first, so it is started once.
func (tr *taskRunner) start(ctx context.Context) (driver.Handle, error) {
	rec := tr.record()
	drv := tr.r.cfg.Drivers[tr.task.Driver]
	if drv == nil {
		err := &driver.ConfigError{Key: "driver", Reason: fmt.Sprintf("driver %q is not available on this node", tr.task.Driver)}
		tr.event(events.TaskEvent{Type: events.TaskEventDriverFailure, Message: err.Error()})
		return nil, err
	}
	if rec.Attempt == 0 {
		if err := tr.r.dir.BuildTask(tr.task.Name); err != nil {
			tr.event(events.TaskEvent{Type: events.TaskEventSetupFailure, Message: err.Error()})
			return nil, &driver.ConfigError{Key: "name", Reason: err.Error()}
		}
		tr.event(events.TaskEvent{Type: events.TaskEventSetup, Message: "Building Task Directory"})
	}
	if err := tr.mountHostVolumes(); err != nil { // hostvolumes.go
		tr.event(events.TaskEvent{Type: events.TaskEventSetupFailure, Message: err.Error(), FailsTask: true})
		return nil, &driver.ConfigError{Key: "volume_mount", Reason: err.Error()}
	}
	if err := tr.prestartTemplates(ctx); err != nil { // templates.go
		return nil, err
	}
	cfg := tr.taskConfig(rec.Attempt)
	if err := tr.update(func(t *state.Task, _ time.Time) { t.Starting = true }); err != nil {
		tr.update(func(t *state.Task, _ time.Time) { t.Starting = false })
		return nil, fmt.Errorf("record start attempt %d: %w", rec.Attempt, err)
	}
	tr.launching() // templates.go
	h, err := drv.Start(ctx, cfg)
	if err != nil {
		tr.update(func(t *state.Task, now time.Time) {
			t.Starting = false
			if ctx.Err() == nil {
				appendEvent(&t.State, events.TaskEvent{Type: events.TaskEventDriverFailure, Time: now.UnixNano(), Message: err.Error()})
			}
		})
		return nil, err
	}
	hs := h.State()
	tr.update(func(t *state.Task, now time.Time) {
		t.Starting, t.Handle = false, &hs
		t.State.State, t.State.StartedAt = events.TaskStateRunning, now.UnixNano()
		t.State.FinishedAt = 0
		appendEvent(&t.State, events.TaskEvent{Type: events.TaskEventStarted, Time: now.UnixNano(), Message: "Task started by client"})
	})
	tr.r.cfg.Metrics.inc(func(m *Metrics) prometheus.Counter { return m.TaskStarts })
	tr.log.Info("task started", "attempt", rec.Attempt)
	return h, nil
}

// taskConfig is what the driver is given for attempt.
func (tr *taskRunner) taskConfig(attempt int) driver.TaskConfig {
	r := tr.r
	r.mu.Lock()
	a := r.mu.rec.Alloc
	job := r.mu.rec.Job
	tg := r.groupLocked()
	r.mu.Unlock()
	t := &tr.task
	// The driver gets the config with its ${...} interpolated (env.go).
	env := taskEnv(&a, job, tg, t, r.dir, r.cfg.Node, tr.templateEnv())
	cfg := driver.TaskConfig{
		AllocID: a.ID, Task: t.Name, ID: fmt.Sprintf("%s-%s-%d", a.ID, t.Name, attempt),
		Config: env.ReplaceConfig(t.Config), Env: env.Vars(),
		Dir: r.dir.TaskDir(t.Name), StdoutPath: r.dir.Stdout(t.Name), StderrPath: r.dir.Stderr(t.Name),
		LogMaxBytes: r.cfg.LogMaxBytes, LogMaxFiles: r.cfg.LogMaxFiles,
		KillSignal: t.KillSignal, KillTimeout: t.KillTimeout,
	}
	if t.Resources != nil {
		cfg.CPU, cfg.MemoryMB, cfg.MemoryMaxMB = t.Resources.CPU, t.Resources.MemoryMB, t.Resources.MemoryMaxMB
	}
	return cfg
}

type waited struct {
	res driver.ExitResult
	err error
}

// wait waits for the running task to exit, or kills it when asked;
// detached is true when ctx ended first (the task keeps running).
func (tr *taskRunner) wait(ctx context.Context, h driver.Handle) (end ended, detached bool) {
	wctx, cancel := context.WithCancel(ctx)
	ch := make(chan waited, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		res, err := h.Wait(wctx)
		ch <- waited{res, err}
	})
	defer func() {
		cancel()
		wg.Wait()
	}()
	select {
	case w := <-ch:
		if w.err != nil {
			return ended{}, true
		}
		return ended{res: w.res}, false
	case <-tr.killCh:
		return tr.kill(ctx, h, ch)
	case ev := <-tr.restartCh:
		return tr.restartAttempt(ctx, h, ch, ev) // control.go
	case <-ctx.Done():
		return ended{}, true
	}
}

// kill stops the running task: Killing, the shutdown delay, the driver's
// Stop (kill signal, kill timeout), Killed.
func (tr *taskRunner) kill(ctx context.Context, h driver.Handle, ch <-chan waited) (ended, bool) {
	_, ev, useDelay := tr.killRequest()
	ev.KillTimeout = tr.task.KillTimeout
	if ev.Message == "" {
		ev.Message = fmt.Sprintf("Sent interrupt. Waiting %v before force killing", tr.task.KillTimeout)
	}
	tr.event(ev)
	tr.r.servicesStopping(tr.task.Name, true) // services.go: deregistered before the delay
	var (
		w      waited
		exited bool
	)
	if d := tr.task.ShutdownDelay; d > 0 && useDelay {
		tr.event(events.TaskEvent{Type: events.TaskEventShutdownDelay, Message: fmt.Sprintf("Waiting for shutdown_delay of %v before killing the task", d)})
		t := tr.r.cfg.Clock.NewTimer(d)
		select {
		case <-t.C():
		case <-tr.skipDelayCh:
		case w = <-ch:
			exited = true
		case <-ctx.Done():
			t.Stop()
			return ended{}, true
		}
		t.Stop()
		if exited && w.err != nil {
			return ended{}, true
		}
	}
	if !exited {
		var detached bool
		if w, detached = tr.stopAndWait(ctx, h, ch); detached { // control.go
			return ended{}, true
		}
	}
	res := w.res
	tr.update(func(t *state.Task, now time.Time) {
		t.Handle, t.Done = nil, true
		t.State.State, t.State.FinishedAt = events.TaskStateDead, now.UnixNano()
		appendEvent(&t.State, events.TaskEvent{Type: events.TaskEventKilled, Time: now.UnixNano(),
			Message: "Task successfully killed", ExitCode: res.ExitCode, Signal: res.Signal})
	})
	tr.log.Info("task killed", "exit_code", res.ExitCode, "signal", res.Signal)
	return ended{res: res, killed: true}, false
}

// afterExit applies the restart policy to an attempt that ended on its
// own (or did not start); true to run the next attempt.
func (tr *taskRunner) afterExit(ctx context.Context, end ended) bool {
	exit := Exit{Successful: end.startErr == nil && !end.lost && end.res.Successful()}
	if ce, ok := errors.AsType[*driver.ConfigError](end.startErr); ok && ce != nil {
		exit.Unrecoverable = true
	}
	r := tr.r
	r.mu.Lock()
	job := r.mu.rec.Job
	tg := r.groupLocked()
	rec := r.mu.rec.Tasks[tr.task.Name]
	window := RestartWindow{Start: rec.RestartWindowStart, Count: rec.RestartWindowCount}
	r.mu.Unlock()
	policy := DefaultRestartPolicy(job.Type)
	if tg != nil && tg.RestartPolicy != nil {
		policy = *tg.RestartPolicy
	}
	now := r.cfg.Clock.Now()
	d := DecideRestart(policy, job.Type, window, exit, now, r.jitter())
	// A task that ended while its allocation is being stopped is not
	// restarted: it is dead (failed, if it was lost).
	killed, killEv, _ := tr.killRequest()
	var stopping *events.TaskEvent
	if killed && d.Action == Restart {
		d = RestartDecision{Action: Terminate, Reason: "Task was killed", Window: d.Window}
		if end.lost {
			d.Action, d.Reason = Fail, "Task was lost and its allocation is stopping"
		} else {
			stopping = &killEv
		}
	}

	var terminated *events.TaskEvent
	switch {
	case end.lost:
		terminated = &events.TaskEvent{Type: events.TaskEventTerminated, Message: lostMessage, ExitCode: -1, FailsTask: d.Action == Fail}
	case end.startErr == nil:
		terminated = &events.TaskEvent{Type: events.TaskEventTerminated, Message: exitMessage(end.res), // control.go
			ExitCode: end.res.ExitCode, Signal: end.res.Signal}
	}
	tr.update(func(t *state.Task, now time.Time) {
		t.Handle, t.Starting = nil, false
		t.RestartWindowStart, t.RestartWindowCount = d.Window.Start, d.Window.Count
		if terminated != nil {
			ev := *terminated
			ev.Time = now.UnixNano()
			appendEvent(&t.State, ev)
		}
		switch d.Action {
		case Restart:
			t.Attempt++
			t.State.Restarts++
			t.State.State = events.TaskStatePending
			appendEvent(&t.State, events.TaskEvent{Type: events.TaskEventRestarting, Time: now.UnixNano(),
				Message: d.Reason, StartDelay: d.Delay})
		case Terminate:
			if stopping != nil {
				ev := *stopping
				ev.Time = now.UnixNano()
				appendEvent(&t.State, ev)
			}
			t.Done = true
			t.State.State, t.State.FinishedAt = events.TaskStateDead, now.UnixNano()
		case Fail:
			t.Done, t.State.Failed = true, true
			t.State.State, t.State.FinishedAt = events.TaskStateDead, now.UnixNano()
			appendEvent(&t.State, events.TaskEvent{Type: events.TaskEventNotRestarting, Time: now.UnixNano(),
				Message: d.Reason, FailsTask: true})
		}
	})
	tr.log.Info("task ended", "exit_code", end.res.ExitCode, "lost", end.lost, "start_err", end.startErr,
		"decision", d.Action, "delay", d.Delay, "reason", d.Reason)
	switch d.Action {
	case Fail:
		r.cfg.Metrics.inc(func(m *Metrics) prometheus.Counter { return m.TaskFailures })
		r.taskFailed(tr.task.Name)
		return false
	case Terminate:
		return false
	}
	r.cfg.Metrics.inc(func(m *Metrics) prometheus.Counter { return m.TaskRestarts })
	t := r.cfg.Clock.NewTimer(d.Delay)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-tr.killCh:
		_, ev, _ := tr.killRequest()
		tr.finishUnstarted(ev)
		return false
	case <-ctx.Done():
		return false
	}
}

// finishUnstarted marks a task killed while it was not running dead.
func (tr *taskRunner) finishUnstarted(ev events.TaskEvent) {
	tr.update(func(t *state.Task, now time.Time) {
		ev.Time = now.UnixNano()
		appendEvent(&t.State, ev)
		t.Done, t.Handle = true, nil
		t.State.State, t.State.FinishedAt = events.TaskStateDead, now.UnixNano()
	})
}

// failSetup fails a task whose allocation could not be set up.
func (tr *taskRunner) failSetup(err error) {
	tr.update(func(t *state.Task, now time.Time) {
		appendEvent(&t.State, events.TaskEvent{Type: events.TaskEventSetupFailure, Time: now.UnixNano(), Message: err.Error(), FailsTask: true})
		t.Done, t.State.Failed = true, true
		t.State.State, t.State.FinishedAt = events.TaskStateDead, now.UnixNano()
	})
}

// event records ev (its time set now).
func (tr *taskRunner) event(ev events.TaskEvent) {
	tr.update(func(t *state.Task, now time.Time) {
		ev.Time = now.UnixNano()
		appendEvent(&t.State, ev)
	})
}
