package disconnect

import (
	"sync"
	"time"

	"github.com/ordoplane/ordo/client/driver/mock"
)

// manualClock is a mock.Clock that moves only when the test advances it,
// so a simulated task on the cut client ends exactly when the test says.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

var _ mock.Clock = (*manualClock)(nil)

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1_800_000_000, 0)} }

// Now implements mock.Clock.
func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer implements mock.Clock.
func (c *manualClock) NewTimer(d time.Duration) mock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		t.fired = true
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock by d and fires the timers due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.fired:
		case !t.at.After(c.now):
			t.fired = true
			t.ch <- c.now
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

type manualTimer struct {
	c     *manualClock
	at    time.Time
	ch    chan time.Time
	fired bool // fired or stopped; guarded by c.mu
}

// C implements mock.Timer.
func (t *manualTimer) C() <-chan time.Time { return t.ch }

// Stop implements mock.Timer.
func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.fired
	t.fired = true
	return was
}
