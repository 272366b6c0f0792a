package waittest_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/waittest"
)

func TestPoll(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	if !waittest.Poll(10*time.Second, func() bool { return n.Load() == 3 }) {
		t.Fatal("a condition that becomes true did not hold")
	}
	start := time.Now()
	checks := 0
	if waittest.Poll(30*time.Millisecond, func() bool { checks++; return false }) {
		t.Fatal("a false condition held")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Fatalf("gave up after %v, before the deadline", waited)
	}
	if checks < 3 {
		t.Fatalf("checked %d times in 30ms", checks)
	}
}

// fakeT records a failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = format
}

func TestForFailsNamingTheCondition(t *testing.T) {
	f := &fakeT{TB: t}
	waittest.For(f, time.Millisecond, "the impossible", func() bool { return false })
	if f.failed == "" {
		t.Fatal("For did not fail")
	}
	waittest.For(t, time.Second, "the obvious", func() bool { return true })
}
