// Package clocktest is a clock.Clock for tests: it reads a fixed time and
// fires its timers only when the test advances it.
//
// # Usage
//
//	c := clocktest.NewClock(time.Unix(1_700_000_000, 0))
//	p, _ := gc.New(gc.Config{..., Clock: c})
//	c.BlockUntilWaiters(1) // the processor is waiting
//	c.Advance(time.Minute) // and its wait is over
//
// # Concurrency
//
// A Clock is safe for concurrent use.
package clocktest

import (
	"sync"
	"time"

	"github.com/ordoplane/ordo/clock"
)

// Clock is a clock.Clock that moves only when Advance or Set is called
// (StepClock: also at each reading).
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*timer
	// added is signalled whenever a waiter is added, for BlockUntilWaiters.
	added *sync.Cond
}

var _ clock.Clock = (*Clock)(nil)

// timer is one pending After, NewTimer or AfterFunc.
type timer struct {
	clock *Clock
	at    time.Time
	c     chan time.Time
	// f, for AfterFunc, runs in its own goroutine when the timer fires.
	f    func()
	done bool
}

// NewClock returns a Clock reading now.
func NewClock(now time.Time) *Clock {
	c := &Clock{now: now}
	c.added = sync.NewCond(&c.mu)
	return c
}

// Now implements clock.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements clock.Clock: the channel receives once the clock has
// been advanced by d (at once when d is not positive).
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.add(d, nil).c }

// NewTimer implements clock.Clock: the timer fires once the clock has been
// advanced by d (at once when d is not positive).
func (c *Clock) NewTimer(d time.Duration) clock.Timer { return c.add(d, nil) }

// AfterFunc implements clock.Clock: f runs in its own goroutine once the
// clock has been advanced by d (at once when d is not positive).
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer { return c.add(d, f) }

func (c *Clock) add(d time.Duration, f func()) *timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{clock: c, at: c.now.Add(d), f: f}
	if f == nil {
		t.c = make(chan time.Time, 1)
	}
	if d <= 0 {
		t.fireLocked(c.now)
		return t
	}
	c.waiters = append(c.waiters, t)
	c.added.Broadcast()
	return t
}

// Advance moves the clock by d and fires the waiters that are due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(c.now.Add(d))
}

// Set moves the clock to now (which may be earlier) and fires the waiters
// that are due.
func (c *Clock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(now)
}

func (c *Clock) setLocked(now time.Time) {
	c.now = now
	kept := c.waiters[:0]
	for _, t := range c.waiters {
		if t.at.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.fireLocked(c.now)
	}
	clear(c.waiters[len(kept):])
	c.waiters = kept
}

// Waiters returns how many After channels and timers have not fired or
// been stopped yet.
func (c *Clock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// BlockUntilWaiters returns once at least n After channels or timers are
// pending: the code under test has reached its wait.
func (c *Clock) BlockUntilWaiters(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.waiters) < n {
		c.added.Wait()
	}
}

// fireLocked delivers the time, or starts f, and marks t done.
func (t *timer) fireLocked(now time.Time) {
	t.done = true
	if t.f != nil {
		go t.f()
		return
	}
	t.c <- now
}

// C implements clock.Timer (nil for AfterFunc).
func (t *timer) C() <-chan time.Time { return t.c }

// Stop implements clock.Timer.
func (t *timer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	for i, w := range c.waiters {
		if w == t {
			c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
			break
		}
	}
	return true
}
