package template

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
)

// EventType is the type of the task events templates record ("Missing:
// …", "Template failed: …", a change script's result), as Nomad's.
const EventType = "Template"

// Change is what one re-render asks of the task, after the splay.
type Change struct {
	// Restart is set when a template with change_mode "restart", or any
	// env = true template, changed: the task restarts (and the others
	// are moot).
	Restart bool
	// Signals are the distinct change_signal of the "signal" templates
	// that changed, in template order.
	Signals []string
	// Scripts are the change_script of the "script" templates that
	// changed, in template order.
	Scripts []events.ChangeScript
}

// Config configures a Manager.
type Config struct {
	// Templates are the task's template blocks.
	Templates []events.Template
	// TaskDir is the task's directory: destinations and sources are
	// inside it. Required.
	TaskDir string
	// Namespace, AllocID and Task name what the templates read as:
	// variables and services are read in Namespace, with the workload
	// identity of Task in AllocID.
	Namespace, AllocID, Task string
	// Env is the task's environment, which the env function reads.
	Env map[string]string
	// Replace interpolates ${...} in the templates' destination, source
	// and change signal; nil replaces nothing.
	Replace func(string) string
	// Source reads variables and services; nil: a template that reads
	// them waits with an event saying none can be read.
	Source Source
	// Running is set when the task already runs (a restarted client
	// re-attached to it): the first render's changes of the files on
	// disk then apply as changes do.
	Running bool
	// Clock is the time source of retries and splay; default clock.System.
	Clock clock.Clock
	// Logger; default slog.Default().
	Logger *slog.Logger
	// RetryMin and RetryMax bound the backoff after a failed read;
	// defaults 1s and 30s.
	RetryMin, RetryMax time.Duration
	// Wait is the wait of the blocking queries; default 5m.
	Wait time.Duration
	// Seed seeds the splay; 0 derives it from AllocID and Task.
	Seed uint64
	// OnEvent records a task event (its time is the caller's to set).
	OnEvent func(events.TaskEvent)
	// OnChange acts on a re-render of a running task.
	OnChange func(Change)
}

// ErrNoSource is the reason a template that reads variables or services
// waits when the Manager has no Source.
var ErrNoSource = errors.New("template: no server to read variables and services from")

// Manager renders one task's templates and watches what they read.
type Manager struct {
	cfg     Config
	tmpls   []*tmpl
	ready   chan struct{}
	failed  chan error
	changed chan struct{}
	rand    *rand.Rand
	// cur is the render pass in progress (Run's goroutine only).
	cur *pass
	// wg joins the watchers.
	wg sync.WaitGroup

	mu struct {
		sync.Mutex
		deps    map[string]*dep
		env     map[string]string
		token   string
		tokenOK bool
	}
}

// New returns a Manager of cfg's templates; an error names a template
// that cannot work (its destination, perms or delimiters).
func New(cfg Config) (*Manager, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = time.Second
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(30*time.Second, cfg.RetryMin)
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 5 * time.Minute
	}
	if cfg.Replace == nil {
		cfg.Replace = func(s string) string { return s }
	}
	if cfg.OnEvent == nil {
		cfg.OnEvent = func(events.TaskEvent) {}
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func(Change) {}
	}
	if cfg.TaskDir == "" {
		return nil, errors.New("template: TaskDir is required")
	}
	seed := cfg.Seed
	if seed == 0 {
		h := fnv.New64a()
		h.Write([]byte(cfg.AllocID + "/" + cfg.Task))
		seed = h.Sum64()
	}
	m := &Manager{cfg: cfg, ready: make(chan struct{}), failed: make(chan error, 1), changed: make(chan struct{}, 1),
		rand: rand.New(rand.NewPCG(seed, 0x74706c))}
	m.mu.deps = map[string]*dep{}
	for i, t := range cfg.Templates {
		tp, err := m.newTmpl(i, t)
		if err != nil {
			return nil, err
		}
		m.tmpls = append(m.tmpls, tp)
	}
	return m, nil
}

// Ready is closed once every template has rendered.
func (m *Manager) Ready() <-chan struct{} { return m.ready }

// Failed receives the error of a template that cannot render before it
// first rendered (Run then returns).
func (m *Manager) Failed() <-chan error { return m.failed }

// Env returns the variables of the env = true templates as last rendered.
func (m *Manager) Env() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.mu.env))
	for k, v := range m.mu.env {
		out[k] = v
	}
	return out
}

func (m *Manager) isReady() bool {
	select {
	case <-m.ready:
		return true
	default:
		return false
	}
}

// Run renders the templates, then re-renders them whenever what they
// read changes, until ctx ends or a template fails before its first
// render.
func (m *Manager) Run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer m.wg.Wait()
	defer cancel()
	lastEvent := ""
	for {
		res := m.renderAll(ctx)
		switch {
		case res.err != nil:
			msg := "Template failed: " + res.err.Error()
			if msg != lastEvent {
				m.cfg.OnEvent(events.TaskEvent{Type: EventType, Message: msg})
				lastEvent = msg
			}
			if !m.isReady() {
				m.failed <- res.err
				return
			}
		case len(res.missing) > 0:
			if msg := "Missing: " + strings.Join(res.missing, ", "); msg != lastEvent {
				m.cfg.OnEvent(events.TaskEvent{Type: EventType, Message: msg})
				lastEvent = msg
			}
		}
		wasReady := m.isReady()
		if res.complete && !wasReady {
			close(m.ready)
			lastEvent = ""
		}
		if ch := res.change; ch != nil && (wasReady || m.cfg.Running) {
			if !m.splay(ctx, res.splay) {
				return
			}
			m.cfg.OnChange(*ch)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.changed:
		}
	}
}

// splay waits a random time up to d; false when ctx ended first.
func (m *Manager) splay(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := m.cfg.Clock.NewTimer(time.Duration(m.rand.Int64N(int64(d))))
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// result is one render pass of every template.
type result struct {
	// complete: every template rendered.
	complete bool
	// missing says why some did not (data that is not there).
	missing []string
	// err is a template that cannot render.
	err error
	// change is what the files that changed ask of the task; splay the
	// longest splay among them.
	change *Change
	splay  time.Duration
}

// renderAll renders each template and writes those whose output changed.
func (m *Manager) renderAll(ctx context.Context) result {
	var res result
	res.complete = true
	var ch Change
	changed := false
	for _, t := range m.tmpls {
		out, missing, err := m.render(ctx, t)
		if err != nil {
			res.err = fmt.Errorf("%s: %w", t.name(), err)
			res.complete = false
			return res
		}
		if missing != nil {
			res.complete = false
			for _, r := range missing {
				if r != "" && !slices.Contains(res.missing, r) {
					res.missing = append(res.missing, r)
				}
			}
			continue
		}
		wrote, err := t.write(out)
		if err != nil {
			res.err = fmt.Errorf("%s: %w", t.name(), err)
			res.complete = false
			return res
		}
		if !wrote {
			continue
		}
		changed = true
		res.splay = max(res.splay, t.t.Splay)
		if t.t.Envvars {
			ch.Restart = true
			continue
		}
		switch t.t.ChangeMode {
		case events.TemplateChangeRestart, "":
			ch.Restart = true
		case events.TemplateChangeSignal:
			if sig := t.signal; !slices.Contains(ch.Signals, sig) {
				ch.Signals = append(ch.Signals, sig)
			}
		case events.TemplateChangeScript:
			if t.t.ChangeScript != nil {
				ch.Scripts = append(ch.Scripts, *t.t.ChangeScript)
			}
		}
	}
	{
		env := map[string]string{}
		for _, t := range m.tmpls {
			if t.t.Envvars && t.lastOK {
				for k, v := range parseEnv(t.last) {
					env[k] = v
				}
			}
		}
		m.mu.Lock()
		m.mu.env = env
		m.mu.Unlock()
	}
	if changed && (ch.Restart || len(ch.Signals) > 0 || len(ch.Scripts) > 0) {
		res.change = &ch
	}
	return res
}

// notify wakes Run after a dependency changed.
func (m *Manager) notify() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}
