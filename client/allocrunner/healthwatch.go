package allocrunner

import (
	"context"
	"time"

	"github.com/ordoplane/ordo/events"
)

// watchHealth decides the allocation's deployment health as its tasks
// change, until ctx ends.
func (r *Runner) watchHealth(ctx context.Context) {
	for {
		next := r.checkHealth()
		var (
			timer <-chan time.Time
			stop  = func() bool { return false }
		)
		if !next.IsZero() {
			t := r.cfg.Clock.NewTimer(next.Sub(r.cfg.Clock.Now()))
			timer, stop = t.C(), t.Stop
		}
		select {
		case <-ctx.Done():
			stop()
			return
		case <-r.changed:
		case <-timer:
		}
		stop()
	}
}

// checkHealth records the allocation's deployment health once it is
// decided; it returns when to look again (zero: at the next change).
func (r *Runner) checkHealth() time.Time {
	checks, passing := r.checksHealthy() // services.go; before r.mu
	r.mu.Lock()
	rec := r.mu.rec
	a := &rec.Alloc
	tg := r.groupLocked()
	switch {
	case a.DeploymentID == "", tg == nil, tg.Update == nil, tg.Update.HealthCheck == "manual":
		r.mu.Unlock()
		return time.Time{}
	case rec.DeploymentStatus != nil && rec.DeploymentStatus.Healthy != nil:
		r.mu.Unlock()
		return time.Time{}
	case rec.DeploymentStatus == nil && a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil:
		r.mu.Unlock() // decided by an earlier client process whose record was lost
		return time.Time{}
	}
	states := make(map[string]*events.TaskState, len(rec.Tasks))
	for name, t := range rec.Tasks {
		states[name] = &t.State
	}
	now := r.cfg.Clock.Now()
	minHealthy := tg.Update.MinHealthyTime
	deadline := tg.Update.HealthyDeadline
	checks = checks && tg.Update.HealthCheck != "task_states"
	healthy, decided, next := DecideHealth(HealthInput{States: states, RunningSince: r.mu.runningSince,
		Placed: r.mu.placed, MinHealthyTime: minHealthy, HealthyDeadline: deadline,
		Checks: checks, ChecksPassing: passing}, now)
	if !decided {
		r.mu.Unlock()
		return next
	}
	ds := &events.AllocDeploymentStatus{Healthy: &healthy, Timestamp: now.UnixNano()}
	if a.DeploymentStatus != nil {
		ds.Canary = a.DeploymentStatus.Canary
	}
	rec.DeploymentStatus = ds
	depID := a.DeploymentID
	r.mu.version++
	err := r.persistLocked()
	r.mu.Unlock()
	if err != nil {
		r.log.Error("store alloc", "err", err)
	}
	r.log.Info("deployment health decided", "deployment_id", depID, "healthy", healthy)
	r.notify()
	return time.Time{}
}
