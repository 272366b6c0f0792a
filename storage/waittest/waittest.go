package waittest

import (
	"testing"
	"time"
)

// maxPause is the longest pause between two checks of a condition.
const maxPause = 10 * time.Millisecond

// For checks cond until it holds, failing t when timeout passes first.
// what names the condition in the failure.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Poll checks cond until it holds or timeout passes and reports whether it
// held.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, maxPause)
	}
}
