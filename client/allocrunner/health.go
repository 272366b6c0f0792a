package allocrunner

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// The defaults of an update strategy's health settings.
const (
	DefaultMinHealthyTime  = 10 * time.Second
	DefaultHealthyDeadline = 5 * time.Minute
)

// HealthInput is what an allocation's deployment health is decided on.
type HealthInput struct {
	// States are the tasks' states.
	States map[string]*events.TaskState
	// RunningSince is when every task was last seen running together
	// (zero while they are not); a restart resets it.
	RunningSince time.Time
	// Placed is when the runner began running the allocation.
	Placed time.Time
	// MinHealthyTime and HealthyDeadline are the group's update settings.
	MinHealthyTime, HealthyDeadline time.Duration
	// Checks is set when health_check is "checks" and the allocation's
	// services have checks that count; ChecksPassing when all of them
	// pass now.
	Checks, ChecksPassing bool
}

// DecideHealth decides an allocation's deployment health at now:
// healthy once every task has run for MinHealthyTime together (and,
// with Checks, every counted check passes at or after that), unhealthy
// once a task has failed or HealthyDeadline passed first. decided is
// false while it is too early to say; next is then when to look again
// (zero: at the next change).
func DecideHealth(in HealthInput, now time.Time) (healthy, decided bool, next time.Time) {
	for _, s := range in.States {
		if s != nil && s.State == events.TaskStateDead && s.Failed {
			return false, true, time.Time{}
		}
	}
	deadline := in.Placed.Add(in.HealthyDeadline)
	if in.HealthyDeadline > 0 && !now.Before(deadline) {
		return false, true, time.Time{}
	}
	if !in.RunningSince.IsZero() {
		ready := in.RunningSince.Add(in.MinHealthyTime)
		switch {
		case now.Before(ready):
			next = ready
		case !in.Checks || in.ChecksPassing:
			return true, true, time.Time{}
		}
	}
	if in.HealthyDeadline > 0 && (next.IsZero() || deadline.Before(next)) {
		next = deadline
	}
	return false, false, next
}

// allRunning reports whether every task is running.
func allRunning(states map[string]*events.TaskState) bool {
	if len(states) == 0 {
		return false
	}
	for _, s := range states {
		if s == nil || s.State != events.TaskStateRunning {
			return false
		}
	}
	return true
}
