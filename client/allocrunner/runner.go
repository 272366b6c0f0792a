package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/state"
	"github.com/ordoplane/ordo/client/template"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
)

// MaxTaskEvents is how many events a task state keeps; older ones drop.
const MaxTaskEvents = 16

// Persister stores allocation records: *state.Store.
type Persister interface {
	PutAlloc(rec *state.Alloc) error
}

var _ Persister = (*state.Store)(nil)

// Config configures a Runner.
type Config struct {
	// Alloc is the allocation as the servers sent it. Required.
	Alloc events.Allocation
	// Job is the job version the allocation runs; it must hold the
	// allocation's task group. Required unless Restored is set.
	Job *events.Job
	// Restored is the allocation's record from an earlier client process:
	// the runner re-attaches to its tasks instead of starting them.
	Restored *state.Alloc
	// Drivers are the client's task drivers by name.
	Drivers map[string]driver.Driver
	// Root is the directory of allocation directories (<data dir>/alloc).
	Root string
	// Store persists the allocation's record. Required.
	Store Persister
	// Clock is the runner's time source; default clock.System.
	Clock clock.Clock
	// Logger; default slog.Default().
	Logger *slog.Logger
	// OnChange is called, with no lock held, after every change of what
	// the client reports about the allocation. Optional.
	OnChange func(allocID string)
	// Node is the node the allocation runs on: its tasks' NOMAD_DC and
	// ${node.*}, ${attr.*} and ${meta.*}, and its host volumes. Optional.
	Node *events.Node
	// Templates reads what the tasks' templates read (variables,
	// services); nil renders templates that read only the environment.
	Templates template.Source
	// LogMaxBytes and LogMaxFiles bound each task's log files; defaults
	// 10 MiB and 10.
	LogMaxBytes int64
	LogMaxFiles int
	// Metrics count task starts, restarts and failures; optional.
	Metrics *Metrics
	// Hooks run around the tasks (hooks.go); optional.
	Hooks []Hook
	// Services registers the allocation's services and runs their
	// checks (services.go, client/services); optional.
	Services ServiceHooks
}

// Validate reports a Config that cannot work.
func (c *Config) Validate() error {
	job := c.Job
	if c.Restored != nil && job == nil {
		job = c.Restored.Job
	}
	switch {
	case c.Alloc.ID == "":
		return errors.New("allocrunner: Alloc.ID is required")
	case job == nil:
		return fmt.Errorf("allocrunner: alloc %s: Job is required", c.Alloc.ID)
	case job.Group(c.Alloc.TaskGroup) == nil:
		return fmt.Errorf("allocrunner: alloc %s: job %s version %d has no group %q", c.Alloc.ID, job.ID, job.Version, c.Alloc.TaskGroup)
	case c.Root == "":
		return errors.New("allocrunner: Root is required")
	case c.Store == nil:
		return errors.New("allocrunner: Store is required")
	case c.LogMaxBytes < 0 || c.LogMaxFiles < 0:
		return errors.New("allocrunner: log limits must not be negative")
	}
	return nil
}

// Runner runs one allocation's tasks. Build it with New, run it with Run.
type Runner struct {
	cfg   Config
	id    string
	dir   AllocDir
	log   *slog.Logger
	tasks []*taskRunner
	// svc is the allocation's service hook (services.go).
	svc serviceState
	// changed wakes the health loop after a task change.
	changed chan struct{}
	// done is closed when Run returns.
	done chan struct{}

	mu struct {
		sync.Mutex
		rec          *state.Alloc
		version      uint64
		runningSince time.Time
		placed       time.Time
		rand         *rand.Rand
	}
}

// New returns a runner for cfg's allocation; nothing runs until Run.
func New(cfg Config) (*Runner, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LogMaxBytes == 0 {
		cfg.LogMaxBytes = 10 << 20
	}
	if cfg.LogMaxFiles == 0 {
		cfg.LogMaxFiles = 10
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, id: cfg.Alloc.ID, dir: NewAllocDir(cfg.Root, cfg.Alloc.ID),
		changed: make(chan struct{}, 1), done: make(chan struct{})}
	r.log = cfg.Logger.With("alloc_id", r.id)
	h := fnv.New64a()
	h.Write([]byte(r.id))
	r.mu.rand = rand.New(rand.NewPCG(h.Sum64(), 0x6f72646f))
	now := cfg.Clock.Now()
	r.mu.placed = now

	rec := cfg.Restored
	if rec == nil {
		rec = &state.Alloc{Alloc: cfg.Alloc, Job: cfg.Job, Tasks: map[string]*state.Task{}}
	} else {
		rec.Alloc = cfg.Alloc
		if cfg.Job != nil {
			rec.Job = cfg.Job
		}
		if rec.Tasks == nil {
			rec.Tasks = map[string]*state.Task{}
		}
	}
	tg := rec.Job.Group(cfg.Alloc.TaskGroup)
	for i := range tg.Tasks {
		t := tg.Tasks[i]
		if rec.Tasks[t.Name] == nil {
			ts := &state.Task{State: events.TaskState{State: events.TaskStatePending}}
			appendEvent(&ts.State, events.TaskEvent{Type: events.TaskEventReceived, Time: now.UnixNano(),
				Message: "Task received by client"})
			rec.Tasks[t.Name] = ts
		}
		r.tasks = append(r.tasks, newTaskRunner(r, t))
	}
	r.mu.rec = rec
	if cfg.Services != nil {
		r.svc.hook = cfg.Services.ForAlloc(r)
	}
	return r, nil
}

// ID returns the allocation's id.
func (r *Runner) ID() string { return r.id }

// Dir returns the allocation's directory.
func (r *Runner) Dir() AllocDir { return r.dir }

// Done is closed when Run has returned.
func (r *Runner) Done() <-chan struct{} { return r.done }

// Run builds the allocation's directory and runs its tasks until every
// task is dead for good, or until ctx ends: then it returns leaving the
// tasks running (their handles stored), for a later client to Recover.
func (r *Runner) Run(ctx context.Context) {
	defer close(r.done)
	if err := r.persist(); err != nil {
		r.log.Error("store alloc", "err", err)
	}
	if err := r.dir.Build(); err != nil {
		r.log.Error("build alloc dir", "err", err)
		for _, tr := range r.tasks {
			tr.failSetup(err)
		}
		r.notify()
		return
	}
	if err := r.prerun(ctx); err != nil { // hooks.go
		r.log.Error("allocation hook", "err", err)
		for _, tr := range r.tasks {
			tr.failSetup(err)
		}
		r.notify()
		r.postrun(ctx)
		return
	}
	var wg sync.WaitGroup
	for _, tr := range r.tasks {
		wg.Go(func() { tr.run(ctx) })
	}
	hctx, stopHealth := context.WithCancel(ctx)
	var hwg sync.WaitGroup
	hwg.Go(func() { r.watchHealth(hctx) })
	r.syncServices() // a restarted client registers what still runs
	wg.Wait()
	stopHealth()
	hwg.Wait()
	r.closeServices(ctx.Err() == nil) // services.go
	if ctx.Err() == nil {
		r.checkHealth() // a task that failed last makes the alloc unhealthy
		r.postrun(ctx)
	}
}

// Update gives the runner the allocation as the servers now see it, and
// the job version it runs (nil: unchanged). A stop or evict kills the
// tasks, after their shutdown delay unless the allocation's desired
// transition says NoShutdownDelay (N23).
func (r *Runner) Update(a events.Allocation, job *events.Job) {
	r.mu.Lock()
	rec := r.mu.rec
	if a.DeploymentID != rec.Alloc.DeploymentID {
		rec.DeploymentStatus = nil
		r.mu.placed = r.cfg.Clock.Now()
	}
	rec.Alloc = a
	if job != nil && job.Group(a.TaskGroup) != nil {
		rec.Job = job
	}
	err := r.persistLocked()
	r.mu.Unlock()
	if err != nil {
		r.log.Error("store alloc", "err", err)
	}
	noDelay := a.DesiredTransition.NoShutdownDelay != nil && *a.DesiredTransition.NoShutdownDelay
	if a.ServerTerminal() {
		r.Kill(events.TaskEvent{Type: events.TaskEventKilling,
			Message: fmt.Sprintf("Allocation desired status %s: %s", a.DesiredStatus, a.DesiredDescription)}, !noDelay)
	}
	if noDelay {
		for _, tr := range r.tasks {
			tr.skipShutdownDelay()
		}
	}
	r.syncServices()
	r.wake()
}

// Kill stops every task that is not dead yet: ev (a Killing event) is
// recorded, then each running task waits its shutdown delay when
// shutdownDelay is true, and is stopped through its driver with its kill
// signal and kill timeout. Kill does not wait; Done is closed once Run has
// seen every task dead.
func (r *Runner) Kill(ev events.TaskEvent, shutdownDelay bool) {
	for _, tr := range r.tasks {
		tr.requestKill(ev, shutdownDelay)
	}
}

// Alloc returns the allocation as the runner last heard of it.
func (r *Runner) Alloc() events.Allocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.rec.Alloc
}

// Terminal reports whether every task is dead for good.
func (r *Runner) Terminal() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.mu.rec.Tasks {
		if !t.Done {
			return false
		}
	}
	return true
}

// ClientUpdate returns what the client reports about the allocation now,
// with a version that grows with every change.
func (r *Runner) ClientUpdate() (events.AllocClientUpdate, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.mu.rec
	states := make(map[string]*events.TaskState, len(rec.Tasks))
	for name, t := range rec.Tasks {
		s := t.State
		s.Events = slices.Clone(s.Events)
		states[name] = &s
	}
	status, desc := ClientStatus(states)
	u := events.AllocClientUpdate{ID: r.id, ClientStatus: status, ClientDescription: desc, TaskStates: states}
	if ds := rec.DeploymentStatus; ds != nil {
		c := *ds
		u.DeploymentStatus = &c
	}
	return u, r.mu.version
}

// TaskRecord returns a copy of task's record, for tests and status.
func (r *Runner) TaskRecord(task string) (state.Task, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.mu.rec.Tasks[task]
	if !ok {
		return state.Task{}, false
	}
	c := *t
	c.State.Events = slices.Clone(t.State.Events)
	return c, true
}

// group returns the allocation's task group in the job it runs.
func (r *Runner) groupLocked() *events.TaskGroup {
	return r.mu.rec.Job.Group(r.mu.rec.Alloc.TaskGroup)
}

// updateTask applies f to task's record, stores the allocation's record
// and tells the client. It returns the store's error.
func (r *Runner) updateTask(task string, f func(t *state.Task, now time.Time)) error {
	r.mu.Lock()
	now := r.cfg.Clock.Now()
	f(r.mu.rec.Tasks[task], now)
	r.mu.version++
	states := make(map[string]*events.TaskState, len(r.mu.rec.Tasks))
	for name, t := range r.mu.rec.Tasks {
		states[name] = &t.State
	}
	if allRunning(states) {
		if r.mu.runningSince.IsZero() {
			r.mu.runningSince = now
		}
	} else {
		r.mu.runningSince = time.Time{}
	}
	err := r.persistLocked()
	r.mu.Unlock()
	if err != nil {
		r.log.Error("store alloc", "task", task, "err", err)
	}
	r.notify()
	r.syncServices()
	r.wake()
	return err
}

func (r *Runner) persist() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.persistLocked()
}

func (r *Runner) persistLocked() error { return r.cfg.Store.PutAlloc(r.mu.rec) }

func (r *Runner) notify() {
	if r.cfg.OnChange != nil {
		r.cfg.OnChange(r.id)
	}
}

func (r *Runner) wake() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// jitter returns a random fraction for restart delays.
func (r *Runner) jitter() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.rand.Float64()
}

// taskFailed kills the failed task's siblings, as Nomad does.
func (r *Runner) taskFailed(name string) {
	for _, tr := range r.tasks {
		if tr.task.Name != name {
			tr.requestKill(events.TaskEvent{Type: events.TaskEventSiblingFailed,
				Message: fmt.Sprintf("Task's sibling %q failed", name)}, false)
		}
	}
}

// appendEvent records e in s, keeping the latest MaxTaskEvents.
func appendEvent(s *events.TaskState, e events.TaskEvent) {
	s.Events = append(s.Events, e)
	if n := len(s.Events); n > MaxTaskEvents {
		s.Events = append(s.Events[:0:0], s.Events[n-MaxTaskEvents:]...)
	}
}
