// Package clock is the client agent's source of time: the heartbeat and
// alloc-update loops, restart delays, shutdown delays and deployment
// health all wait on a Clock's timers, so tests run them on
// testing/synctest's virtual time or on a clock of their own.
//
// # Usage
//
//	var c clock.Clock = clock.System{}
//	t := c.NewTimer(time.Second)
//	defer t.Stop()
//	<-t.C()
//
// # Concurrency
//
// System is safe for concurrent use; a Timer belongs to its caller.
//
// # Invariants
//
//   - Nothing in the client reads time.Now or starts a time.Timer except
//     through a Clock.
package clock

import "time"

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer made by a Clock.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// System is the real clock.
type System struct{}

var _ Clock = System{}

// Now implements Clock.
func (System) Now() time.Time { return time.Now() }

// NewTimer implements Clock.
func (System) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }
