package main

import (
	"os"
	"testing"
	"time"
)

// TestMain samples a store's quiet every 10 ms, not 500: each generated
// history settles in 60 ms at least, not 3 s.
func TestMain(m *testing.M) {
	quietEvery = 10 * time.Millisecond
	os.Exit(m.Run())
}

// TestWaitQuiet: waitQuiet returns once busy has said no quietSamples
// times in a row, sampling again after each yes.
func TestWaitQuiet(t *testing.T) {
	answers := []bool{true, false, true}
	calls := 0
	waitQuiet(time.Minute, func() bool {
		calls++
		if len(answers) > 0 {
			b := answers[0]
			answers = answers[1:]
			return b
		}
		return false
	})
	if want := 3 + quietSamples; calls != want {
		t.Fatalf("busy asked %d times, want %d", calls, want)
	}
}
