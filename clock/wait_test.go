package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/clock/clocktest"
)

func TestBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 10 * time.Second, 60: 10 * time.Second} {
		if got := clock.Backoff(n, time.Second, 10*time.Second); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestSleep(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(0, 0))
	done := make(chan bool)
	go func() { done <- clock.Sleep(context.Background(), clk, time.Minute) }()
	clk.BlockUntilWaiters(1)
	clk.Advance(time.Minute)
	if !<-done {
		t.Fatal("Sleep reported false after its time passed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- clock.Sleep(ctx, clk, time.Minute) }()
	clk.BlockUntilWaiters(1)
	cancel()
	if <-done {
		t.Fatal("Sleep reported true after its context ended")
	}
}
