package mirror

import "time"

// Clock is the mirror's source of time: Now stamps lag and errors, After
// paces retries. Tests pass a fake.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// realClock is the system clock.
type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// backoff returns the wait before retry n (0-based): min doubled n times,
// at most max.
func backoff(n int, min, max time.Duration) time.Duration {
	d := min
	for range n {
		if d >= max/2 {
			return max
		}
		d *= 2
	}
	return d
}
