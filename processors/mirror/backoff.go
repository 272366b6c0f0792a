package mirror

import "time"

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
