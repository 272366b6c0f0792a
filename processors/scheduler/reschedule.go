package scheduler

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// failTime is when a failed allocation stopped: its last task's finish
// time, or its modify time.
func failTime(a *events.Allocation) int64 {
	var t int64
	for _, ts := range a.TaskStates {
		if ts != nil && ts.FinishedAt > t {
			t = ts.FinishedAt
		}
	}
	if t == 0 {
		t = a.ModifyTime
	}
	return t
}

// rescheduleAt reports whether failed allocation a may be rescheduled under
// policy p and, if so, from when (its fail time plus the backoff delay).
// A forced reschedule may happen at once.
func rescheduleAt(a *events.Allocation, p *events.ReschedulePolicy) (ok bool, at int64, delay time.Duration) {
	if isTrue(a.DesiredTransition.ForceReschedule) {
		return true, 0, 0
	}
	if p == nil || (!p.Unlimited && p.Attempts <= 0) {
		return false, 0, 0
	}
	ft := failTime(a)
	if !p.Unlimited {
		attempts := 0
		for _, ev := range a.RescheduleEvents {
			if p.Interval <= 0 || ft-ev.RescheduleTime <= int64(p.Interval) {
				attempts++
			}
		}
		if attempts >= p.Attempts {
			return false, 0, 0
		}
	}
	delay = rescheduleDelay(a, p)
	return true, ft + int64(delay), delay
}

// rescheduleDelay is the backoff before the next attempt for a, which has
// already been rescheduled len(a.RescheduleEvents) times: constant,
// exponential (doubling) or fibonacci, capped at MaxDelay.
func rescheduleDelay(a *events.Allocation, p *events.ReschedulePolicy) time.Duration {
	if p == nil {
		return 0
	}
	n := len(a.RescheduleEvents)
	d := p.Delay
	switch p.DelayFunction {
	case "exponential":
		for i := 0; i < n && (p.MaxDelay <= 0 || d < p.MaxDelay); i++ {
			d *= 2
		}
	case "fibonacci":
		prev, cur := time.Duration(0), p.Delay
		for i := 0; i < n && (p.MaxDelay <= 0 || cur < p.MaxDelay); i++ {
			prev, cur = cur, prev+cur
			if prev == 0 {
				prev = p.Delay
			}
		}
		d = cur
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d
}
