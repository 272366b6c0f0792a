package clocktest_test

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
)

func TestFiresOnlyWhenAdvanced(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	c := clocktest.NewClock(t0)
	after := c.After(time.Minute)
	timer := c.NewTimer(2 * time.Minute)
	stopped := c.NewTimer(time.Minute)
	if n := c.Waiters(); n != 3 {
		t.Fatalf("Waiters = %d, want 3", n)
	}
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop must report true once, then false")
	}
	c.BlockUntilWaiters(2)
	c.Advance(59 * time.Second)
	select {
	case <-after:
		t.Fatal("After fired early")
	default:
	}
	c.Advance(time.Second)
	if got := <-after; !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("After received %v", got)
	}
	select {
	case <-timer.C():
		t.Fatal("timer fired early")
	case <-stopped.C():
		t.Fatal("a stopped timer fired")
	default:
	}
	c.Set(t0.Add(time.Hour))
	<-timer.C()
	if timer.Stop() {
		t.Fatal("Stop after firing reported true")
	}
	if n := c.Waiters(); n != 0 {
		t.Fatalf("Waiters = %d, want 0", n)
	}
	select {
	case <-c.After(0):
	default:
		t.Fatal("After(0) must fire at once")
	}
}

func TestAfterFuncRunsWhenAdvanced(t *testing.T) {
	c := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	ran := make(chan struct{})
	c.AfterFunc(time.Second, func() { close(ran) })
	stopped := c.AfterFunc(time.Second, func() { t.Error("a stopped AfterFunc ran") })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending AfterFunc reported false")
	}
	select {
	case <-ran:
		t.Fatal("AfterFunc ran before the clock moved")
	default:
	}
	c.Advance(time.Second)
	<-ran
	if n := c.Waiters(); n != 0 {
		t.Fatalf("Waiters = %d, want 0", n)
	}
}

// TestStepClock: each reading moves the clock by the step first.
func TestStepClock(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := clocktest.NewStepClock(start, time.Second)
	if got := c.Now(); !got.Equal(start.Add(time.Second)) {
		t.Fatalf("first reading %v, want start+1s", got)
	}
	if got := c.Now(); !got.Equal(start.Add(2 * time.Second)) {
		t.Fatalf("second reading %v, want start+2s", got)
	}
}
