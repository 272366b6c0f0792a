package raftlog

import (
	"context"
	"sync"
)

// Rounds shares one confirmation between the callers waiting at once. A
// caller joins the next round to start, never one already running: that
// one may have begun before the caller's read did, and a read must be
// confirmed by a round begun after it. At most one round runs at a time.
// The zero value is ready to use.
type Rounds[T any] struct {
	mu      sync.Mutex
	running bool
	next    *round[T]
}

// round is one confirmation; done closes once val and err are set.
type round[T any] struct {
	done chan struct{}
	val  T
	err  error
	// callers counts who joined it (under Rounds.mu).
	callers int
}

// Wait joins the next round of do and returns its result, or ctx's error
// when ctx ends first (the round goes on for the others).
func (v *Rounds[T]) Wait(ctx context.Context, do func() (T, error)) (T, error) {
	v.mu.Lock()
	if v.next == nil {
		v.next = &round[T]{done: make(chan struct{})}
	}
	r := v.next
	r.callers++
	if !v.running {
		v.running = true
		v.next = nil
		go v.run(r, do)
	}
	v.mu.Unlock()
	select {
	case <-r.done:
		return r.val, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// run completes r, then each round callers joined meanwhile, until none is waiting.
func (v *Rounds[T]) run(r *round[T], do func() (T, error)) {
	for r != nil {
		r.val, r.err = do()
		close(r.done)
		v.mu.Lock()
		r, v.next = v.next, nil
		if r == nil {
			v.running = false
		}
		v.mu.Unlock()
	}
}
