package services

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/events"
)

// Target is the allocation a hook serves: *allocrunner.Runner.
type Target interface {
	Execer
	// ID is the allocation's id.
	ID() string
	// RestartUnhealthy restarts task for check_restart.
	RestartUnhealthy(task, reason string) error
	// ChecksChanged is told when a check's status changed.
	ChecksChanged()
}

var _ Target = (*allocrunner.Runner)(nil)

// Hook returns the service hook of the allocation t.
func (m *Manager) Hook(t Target) allocrunner.ServiceHook {
	return &allocServices{m: m, t: t, log: m.log.With("alloc_id", t.ID())}
}

// allocServices is one allocation's service instances and their checks.
type allocServices struct {
	m   *Manager
	t   Target
	log interface {
		Warn(msg string, args ...any)
		Info(msg string, args ...any)
	}

	mu struct {
		sync.Mutex
		live map[string]*liveInstance
		// expected is how many checks count for deployment health.
		expected int
		// failing are the errors of services that could not be
		// registered, logged once each.
		failing map[string]bool
		closed  bool
	}
}

// liveInstance is a registered instance with its checks' state.
type liveInstance struct {
	inst       Instance
	statuses   []Status
	restarters []Restarter
	// started is when the check task's attempt started.
	started time.Time
	cancel  context.CancelFunc
}

// Update implements allocrunner.ServiceHook: instances of running tasks
// are registered (their checks started), the others deregistered.
func (a *allocServices) Update(v allocrunner.ServiceView) {
	node := a.m.cfg.Node()
	insts, errs := Instances(v, &node)
	expected := countedChecks(v)

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.closed {
		return
	}
	if a.mu.live == nil {
		a.mu.live = map[string]*liveInstance{}
		a.mu.failing = map[string]bool{}
	}
	a.mu.expected = expected
	failing := map[string]bool{}
	for _, err := range errs {
		failing[err.Error()] = true
		if !a.mu.failing[err.Error()] {
			a.log.Warn("service not registered", "err", err)
		}
	}
	a.mu.failing = failing

	want := map[string]bool{}
	for _, inst := range insts {
		want[inst.Reg.ID] = true
		started := v.Tasks[inst.CheckTask].StartedAt
		if cur := a.mu.live[inst.Reg.ID]; cur != nil {
			if sameDefinition(cur.inst, inst) {
				cur.started = started
				continue
			}
			cur.cancel()
		}
		a.startLocked(inst, started)
	}
	for id, cur := range a.mu.live {
		if !want[id] {
			cur.cancel()
			delete(a.mu.live, id)
			a.m.remove(id)
		}
	}
}

// sameDefinition reports whether an instance is still what was
// registered (its checks' statuses aside).
func sameDefinition(a, b Instance) bool {
	ra, rb := a.Reg, b.Reg
	ra.Checks, rb.Checks = nil, nil
	return reflect.DeepEqual(ra, rb) && reflect.DeepEqual(a.Checks, b.Checks)
}

// startLocked registers inst and starts its checks.
func (a *allocServices) startLocked(inst Instance, started time.Time) {
	li := &liveInstance{inst: inst, started: started,
		statuses: make([]Status, len(inst.Checks)), restarters: make([]Restarter, len(inst.Checks))}
	for i := range inst.Checks {
		li.statuses[i] = NewStatus(&inst.Checks[i].ServiceCheck)
	}
	ctx, cancel := context.WithCancel(a.m.checks)
	li.cancel = cancel
	a.mu.live[inst.Reg.ID] = li
	a.m.set(inst.Reg)
	for i := range inst.Checks {
		a.m.goCheck(func(context.Context) { a.runCheck(ctx, li, i) })
	}
}

// runCheck runs check i of li on its interval until ctx ends.
func (a *allocServices) runCheck(ctx context.Context, li *liveInstance, i int) {
	c := li.inst.Checks[i]
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultCheckInterval
	}
	clk := a.m.cfg.Clock
	for {
		began := clk.Now()
		res := RunCheck(ctx, &c, a.m.cfg.HTTPClient, a.t)
		if ctx.Err() != nil {
			return
		}
		a.m.cfg.Metrics.observe(res.Status, clk.Now().Sub(began).Seconds())
		a.result(li, i, res)
		t := clk.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// result applies one result of check i of li: a status change updates
// the registration and the deployment health; check_restart may restart
// the task.
func (a *allocServices) result(li *liveInstance, i int, res Result) {
	now := a.m.cfg.Clock.Now()
	c := &li.inst.Checks[i]
	a.mu.Lock()
	if a.mu.closed || a.mu.live[li.inst.Reg.ID] != li {
		a.mu.Unlock()
		return // deregistered meanwhile
	}
	changed := li.statuses[i].Observe(&c.ServiceCheck, res.Status)
	status := li.statuses[i].Status
	if changed {
		reg := li.inst.Reg
		reg.Checks = append([]events.CheckStatus(nil), reg.Checks...)
		reg.Checks[i] = events.CheckStatus{Name: c.Name, Status: status, Output: res.Output, Timestamp: now.UnixNano()}
		li.inst.Reg = reg
		a.m.set(reg)
	}
	restart := li.restarters[i].Observe(c.CheckRestart, status, now, li.started)
	a.mu.Unlock()

	if changed {
		a.log.Info("check status changed", "service", li.inst.Reg.ServiceName, "check", c.Name, "status", status)
		a.t.ChecksChanged()
	}
	if restart {
		reason := fmt.Sprintf("healthcheck: check %q unhealthy", c.Name)
		a.log.Info("restarting task for an unhealthy check", "task", c.TaskName, "check", c.Name)
		if err := a.t.RestartUnhealthy(c.TaskName, reason); err != nil {
			a.log.Warn("check_restart", "task", c.TaskName, "err", err)
		} else {
			a.m.cfg.Metrics.restarted()
		}
	}
}

// ChecksHealthy implements allocrunner.ServiceHook: counted when the
// allocation's services have checks that count for deployment health,
// passing when every one of them is registered and passing (or warning,
// with on_update ignore_warnings).
func (a *allocServices) ChecksHealthy() (counted, passing bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.expected == 0 {
		return false, false
	}
	n := 0
	for _, li := range a.mu.live {
		for i, c := range li.inst.Checks {
			counts, pass := countsForHealth(onUpdate(&li.inst.Service, &c.ServiceCheck), li.statuses[i].Status)
			if !counts {
				continue
			}
			if !pass {
				return true, false
			}
			n++
		}
	}
	return true, n >= a.mu.expected
}

// Close implements allocrunner.ServiceHook.
func (a *allocServices) Close(deregister bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.closed = true
	for id, li := range a.mu.live {
		li.cancel()
		if deregister {
			a.m.remove(id)
		}
	}
	a.mu.live = nil
}

// onUpdate is a check's on_update: its own, else its service's.
func onUpdate(s *events.Service, c *events.ServiceCheck) string {
	if c.OnUpdate != "" {
		return c.OnUpdate
	}
	return s.OnUpdate
}

// countedChecks is how many checks of the allocation's services count
// for its deployment health.
func countedChecks(v allocrunner.ServiceView) int {
	if v.Job == nil {
		return 0
	}
	tg := v.Job.Group(v.Alloc.TaskGroup)
	if tg == nil {
		return 0
	}
	n := 0
	count := func(svcs []events.Service) {
		for i := range svcs {
			s := &svcs[i]
			if s.Provider != "" && s.Provider != events.ServiceProviderNomad {
				continue
			}
			for j := range s.Checks {
				if counts, _ := countsForHealth(onUpdate(s, &s.Checks[j]), ""); counts {
					n++
				}
			}
		}
	}
	count(tg.Services)
	for i := range tg.Tasks {
		count(tg.Tasks[i].Services)
	}
	return n
}
