// Package followtest helps test processors: a clock that moves only when
// the test says so.
package followtest

import (
	"sync"
	"time"

	"github.com/ordoplane/ordo/processors/follow"
)

// Clock is a follow.Clock that moves only when Advance is called.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

var _ follow.Clock = (*Clock)(nil)

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a Clock reading now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now implements follow.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements follow.Clock: the channel receives once the clock has
// been advanced by d (at once when d is not positive).
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{c.now.Add(d), ch})
	return ch
}

// Advance moves the clock by d and fires the waiters that are due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// Waiters returns how many After channels have not fired yet.
func (c *Clock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}
