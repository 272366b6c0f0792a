package raftlog

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/waittest"
)

// TestRoundsShareRoundsBegunAfterTheCall: callers arriving while a
// confirmation runs wait for the next one (the running one may have begun
// before their read), and share it.
func TestRoundsShareRoundsBegunAfterTheCall(t *testing.T) {
	var v Rounds[struct{}]
	release := make(chan error)
	var rounds sync.WaitGroup
	var mu sync.Mutex
	count := 0
	confirm := func() (struct{}, error) {
		mu.Lock()
		count++
		mu.Unlock()
		return struct{}{}, <-release
	}
	first := make(chan error, 1)
	go func() { _, err := v.Wait(context.Background(), confirm); first <- err }()
	waittest.For(t, 10*time.Second, "the first round to confirm", func() bool { mu.Lock(); defer mu.Unlock(); return count == 1 })

	late := make(chan error, 2)
	for range 2 {
		rounds.Add(1)
		go func() { defer rounds.Done(); _, err := v.Wait(context.Background(), confirm); late <- err }()
	}
	waittest.For(t, 10*time.Second, "two callers waiting on the next round", func() bool { v.mu.Lock(); defer v.mu.Unlock(); return v.next != nil && v.next.callers == 2 })
	errOld := errors.New("deposed during the first round")
	release <- errOld
	if err := <-first; !errors.Is(err, errOld) {
		t.Fatalf("first caller got %v", err)
	}
	release <- nil // the second round, shared by both late callers
	rounds.Wait()
	for range 2 {
		if err := <-late; err != nil {
			t.Fatalf("late caller got %v, want the second round's answer", err)
		}
	}
	if count != 2 {
		t.Fatalf("%d rounds for three callers, want 2", count)
	}
}
