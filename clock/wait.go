package clock

import (
	"context"
	"time"
)

// Sleep waits d on c and reports true, or false when ctx ends first.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// Backoff returns the wait before the n-th retry in a row (from 1): lo,
// doubled for each retry after the first, at most hi.
func Backoff(n int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}
