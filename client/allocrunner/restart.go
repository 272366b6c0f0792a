package allocrunner

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/events"
)

// The restart policy's modes.
const (
	RestartModeFail  = "fail"
	RestartModeDelay = "delay"
)

// RestartWindow is the restart policy's current interval: when it began
// and how many restarts it has counted.
type RestartWindow struct {
	Start time.Time
	Count int
}

// RestartAction is what becomes of a task that exited or failed to start.
type RestartAction int

// The actions.
const (
	// Restart starts the task again after the decision's Delay.
	Restart RestartAction = iota
	// Terminate leaves the task dead and not failed: a batch task that
	// exited successfully.
	Terminate
	// Fail leaves the task dead and failed.
	Fail
)

func (a RestartAction) String() string {
	switch a {
	case Restart:
		return "restart"
	case Terminate:
		return "terminate"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("RestartAction(%d)", int(a))
}

// RestartDecision is the outcome of DecideRestart.
type RestartDecision struct {
	Action RestartAction
	// Delay is how long to wait before restarting.
	Delay time.Duration
	// Reason explains the decision, as Nomad words it.
	Reason string
	// Window is the policy's window after this decision; persist it.
	Window RestartWindow
}

// Exit is how a task attempt ended, as the restart policy sees it.
type Exit struct {
	// Successful is an exit of its own with code 0.
	Successful bool
	// Unrecoverable is a start that can never succeed (an invalid
	// configuration): never restarted.
	Unrecoverable bool
}

// DefaultRestartPolicy is the policy of a group that has none: Nomad's
// defaults for the job type.
func DefaultRestartPolicy(jobType string) events.RestartPolicy {
	switch jobType {
	case events.JobTypeBatch, events.JobTypeSysbatch:
		return events.RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: RestartModeFail}
	}
	return events.RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: RestartModeFail}
}

// DecideRestart applies a group's restart policy (Nomad's semantics) to a
// task attempt that ended at now. jitter in [0, 1) adds up to a quarter
// of the policy's delay, so tasks failing together do not restart in
// lockstep.
//
//   - A batch or sysbatch task that exits successfully terminates; a
//     service or system task is restarted even after a successful exit.
//   - Attempts counts restarts within Interval: a failure after the
//     interval has passed begins a new one. Within it, up to Attempts
//     restarts are made after Delay (plus jitter).
//   - Past Attempts, mode "fail" fails the task; mode "delay" restarts it
//     when the interval ends, beginning a new one.
//   - Attempts 0 never restarts: the task fails (or terminates, for a
//     successful batch exit).
func DecideRestart(p events.RestartPolicy, jobType string, w RestartWindow, exit Exit, now time.Time, jitter float64) RestartDecision {
	batch := jobType == events.JobTypeBatch || jobType == events.JobTypeSysbatch
	switch {
	case exit.Unrecoverable:
		return RestartDecision{Action: Fail, Reason: "Error was unrecoverable", Window: w}
	case exit.Successful && batch:
		return RestartDecision{Action: Terminate, Reason: "Restart unnecessary as task terminated successfully", Window: w}
	case p.Attempts <= 0:
		return RestartDecision{Action: Fail, Reason: "Policy allows no restarts", Window: w}
	}
	end := w.Start.Add(p.Interval)
	if w.Start.IsZero() || now.After(end) {
		w = RestartWindow{Start: now}
		end = now.Add(p.Interval)
	}
	w.Count++
	if w.Count <= p.Attempts {
		jitter = min(max(jitter, 0), 1)
		delay := p.Delay + time.Duration(float64(p.Delay)*0.25*jitter)
		return RestartDecision{Action: Restart, Delay: delay, Reason: "Restart within policy", Window: w}
	}
	if p.Mode == RestartModeDelay {
		return RestartDecision{Action: Restart, Delay: end.Sub(now),
			Reason: "Exceeded allowed attempts, applying a delay", Window: w}
	}
	return RestartDecision{Action: Fail, Reason: "Exceeded allowed attempts", Window: w}
}
