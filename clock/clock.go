package clock

import "time"

// Clock tells the time and waits: a component's only source of time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has passed
	// (at once when d is not positive).
	After(d time.Duration) <-chan time.Time
	// NewTimer returns a timer that fires once after d; Stop it when it
	// is no longer wanted.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in its own goroutine once d has passed, unless the
	// returned timer is stopped first; the timer's C is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer made by a Clock.
type Timer interface {
	// C receives the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped
	// the timer (false when it had already fired or been stopped).
	Stop() bool
}

// System is the real clock.
type System struct{}

var _ Clock = System{}

// Now implements Clock.
func (System) Now() time.Time { return time.Now() }

// After implements Clock.
func (System) After(d time.Duration) <-chan time.Time { return time.After(d) }

// NewTimer implements Clock.
func (System) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

// AfterFunc implements Clock.
func (System) AfterFunc(d time.Duration, f func()) Timer { return systemTimer{time.AfterFunc(d, f)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }
