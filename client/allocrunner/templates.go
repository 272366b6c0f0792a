package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/template"
	"github.com/ordoplane/ordo/events"
)

// The messages of the events a template's change records, as Nomad's.
const (
	templateRestartMessage = "Template with change_mode restart re-rendered"
	templateSignalMessage  = "Template re-rendered"
)

// defaultScriptTimeout bounds a change script without a timeout.
const defaultScriptTimeout = 5 * time.Second

// restartingMessage is the Restarting event's message after the restart
// ev asked for: a template's restart says so; any other is the user's.
func restartingMessage(ev events.TaskEvent) string {
	if ev.Message == templateRestartMessage {
		return templateRestartMessage
	}
	return "User requested restart"
}

// errKilledWaiting is a start abandoned while its templates waited.
var errKilledWaiting = errors.New("task killed while its templates waited")

// taskTemplates is a task runner's template manager and its goroutine.
type taskTemplates struct {
	m      *template.Manager
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// templateEnv returns the variables of the task's env = true templates.
func (tr *taskRunner) templateEnv() map[string]string {
	tr.mu.Lock()
	tt := tr.mu.tmpl
	tr.mu.Unlock()
	if tt == nil {
		return nil
	}
	return tt.m.Env()
}

// startTemplates starts rendering the task's templates, once per run;
// running is set when the task already runs (re-attached after a client
// restart): the files' changes then act on it at once.
func (tr *taskRunner) startTemplates(ctx context.Context, running bool) (*template.Manager, error) {
	tr.mu.Lock()
	tt := tr.mu.tmpl
	tr.mu.Unlock()
	if tt != nil || len(tr.task.Templates) == 0 {
		if tt == nil {
			return nil, nil
		}
		return tt.m, nil
	}
	r := tr.r
	r.mu.Lock()
	a, job, tg := r.mu.rec.Alloc, r.mu.rec.Job, r.groupLocked()
	r.mu.Unlock()
	env := taskEnv(&a, job, tg, &tr.task, r.dir, r.cfg.Node, nil)
	m, err := template.New(template.Config{Templates: tr.task.Templates, TaskDir: r.dir.TaskDir(tr.task.Name),
		Namespace: a.Namespace, AllocID: a.ID, Task: tr.task.Name, Env: env.Vars(), Replace: env.Replace,
		Source: r.cfg.Templates, Running: running, Clock: r.cfg.Clock, Logger: tr.log,
		OnEvent: tr.event, OnChange: func(c template.Change) { tr.templateChanged(ctx, c) }})
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithCancel(ctx)
	tt = &taskTemplates{m: m, cancel: cancel}
	tt.wg.Go(func() { m.Run(tctx) })
	tr.mu.Lock()
	tr.mu.tmpl = tt
	tr.mu.Unlock()
	return m, nil
}

// stopTemplates stops the task's template manager and joins it.
func (tr *taskRunner) stopTemplates() {
	tr.mu.Lock()
	tt := tr.mu.tmpl
	tr.mu.tmpl = nil
	tr.mu.Unlock()
	if tt != nil {
		tt.cancel()
		tt.wg.Wait()
	}
}

// prestartTemplates waits until every template of the task has rendered:
// the task does not start before (a template that waits for a variable
// or a service says why in a Template event). A template that cannot
// render fails the task, as in Nomad.
func (tr *taskRunner) prestartTemplates(ctx context.Context) error {
	m, err := tr.startTemplates(ctx, false)
	if err != nil {
		tr.event(events.TaskEvent{Type: template.EventType, Message: "Template failed: " + err.Error(), FailsTask: true})
		return &driver.ConfigError{Key: "template", Reason: err.Error()}
	}
	if m == nil {
		return nil
	}
	select {
	case <-m.Ready():
		return nil
	case err := <-m.Failed():
		return &driver.ConfigError{Key: "template", Reason: err.Error()}
	case <-tr.killCh:
		return errKilledWaiting
	case <-ctx.Done():
		return ctx.Err()
	}
}

// templateChanged acts on a re-render of a running task: a restart (the
// runner's restart path, not counted by the restart policy), signals, or
// change scripts run through the driver's exec. A task not running needs
// nothing: its next start reads the new files.
func (tr *taskRunner) templateChanged(ctx context.Context, c template.Change) {
	tr.mu.Lock()
	h := tr.mu.handle
	if h == nil && tr.mu.launching {
		// Started, its handle not published yet: act once it is.
		tr.mu.pendingChange = mergeChange(tr.mu.pendingChange, c)
	}
	tr.mu.Unlock()
	if h == nil {
		return
	}
	tr.actOnChange(ctx, h, c)
}

// mergeChange adds c to a pending change.
func mergeChange(p *template.Change, c template.Change) *template.Change {
	if p == nil {
		return &c
	}
	p.Restart = p.Restart || c.Restart
	for _, s := range c.Signals {
		if !slices.Contains(p.Signals, s) {
			p.Signals = append(p.Signals, s)
		}
	}
	p.Scripts = append(p.Scripts, c.Scripts...)
	return p
}

// launching marks the attempt about to start: a template change from now
// on acts on it (templateStarted), one before is in the files it reads.
func (tr *taskRunner) launching() {
	tr.mu.Lock()
	tr.mu.launching, tr.mu.pendingChange = true, nil
	tr.mu.Unlock()
}

// templateStarted acts on the template changes made while the attempt
// whose handle is h was starting.
func (tr *taskRunner) templateStarted(ctx context.Context, h driver.Handle) {
	tr.mu.Lock()
	p := tr.mu.pendingChange
	tr.mu.launching, tr.mu.pendingChange = false, nil
	tr.mu.Unlock()
	if p != nil {
		tr.actOnChange(ctx, h, *p)
	}
}

func (tr *taskRunner) actOnChange(ctx context.Context, h driver.Handle, c template.Change) {
	if c.Restart {
		select {
		case tr.restartCh <- events.TaskEvent{Type: events.TaskEventRestartSignaled, Message: templateRestartMessage}:
		default: // a restart is already pending
		}
		return
	}
	for _, sig := range c.Signals {
		tr.event(events.TaskEvent{Type: events.TaskEventSignaling, Message: templateSignalMessage})
		if err := h.Signal(sig); err != nil {
			tr.event(events.TaskEvent{Type: template.EventType, Message: fmt.Sprintf("Template failed to send signal %s: %v", sig, err)})
		}
	}
	for _, sc := range c.Scripts {
		tr.runChangeScript(ctx, h, sc)
	}
}

// runChangeScript runs a template's change_script beside the task, in
// its environment, bounded by its timeout (default 5s); a failure with
// fail_on_error kills the task.
func (tr *taskRunner) runChangeScript(ctx context.Context, h driver.Handle, sc events.ChangeScript) {
	fail := func(msg string) {
		ev := events.TaskEvent{Type: template.EventType, Message: msg}
		tr.event(ev)
		if sc.FailOnError {
			tr.requestKill(events.TaskEvent{Type: events.TaskEventKilling, Message: "Template script failed, task is being killed"}, false)
		}
	}
	x, ok := h.(driver.Execer)
	if !ok {
		fail(fmt.Sprintf("Template failed to run script %s: the %s driver cannot run commands in the task", sc.Command, tr.task.Driver))
		return
	}
	timeout := sc.Timeout
	if timeout <= 0 {
		timeout = defaultScriptTimeout
	}
	sctx, cancel := context.WithCancel(ctx)
	t := tr.r.cfg.Clock.AfterFunc(timeout, cancel)
	defer func() {
		t.Stop()
		cancel()
	}()
	cfg := tr.taskConfig(tr.record().Attempt)
	var out strings.Builder
	code, err := x.Exec(sctx, driver.ExecRequest{Command: append([]string{sc.Command}, sc.Args...), Env: cfg.Env, Dir: cfg.Dir,
		Stdout: &out, Stderr: &out})
	switch {
	case err != nil:
		fail(fmt.Sprintf("Template failed to run script %s: %v", sc.Command, err))
	case sctx.Err() != nil && ctx.Err() == nil:
		fail(fmt.Sprintf("Template script %s timed out after %v", sc.Command, timeout))
	case code != 0:
		fail(fmt.Sprintf("Template script %s failed with exit code %d", sc.Command, code))
	default:
		tr.event(events.TaskEvent{Type: template.EventType, Message: fmt.Sprintf("Template ran script %s with exit code 0", sc.Command)})
	}
}
