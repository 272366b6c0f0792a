package clocktest

import (
	"sync"
	"time"
)

// StepClock is a Clock that moves by a fixed step each time it is read:
// a test of code that times its own work (metrics, progress rates) sees
// each measured span take a known time.
type StepClock struct {
	*Clock
	step time.Duration
	// mu makes a reading and its step one move, so concurrent readers
	// each see a time of their own.
	mu sync.Mutex
}

// NewStepClock returns a StepClock whose first reading is start+step.
func NewStepClock(start time.Time, step time.Duration) *StepClock {
	return &StepClock{Clock: NewClock(start), step: step}
}

// Now implements clock.Clock: it advances the clock by the step, firing
// the waiters that are due, and returns the new time.
func (c *StepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Advance(c.step)
	return c.Clock.Now()
}
