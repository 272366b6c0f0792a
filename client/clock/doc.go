// Package clock is the client agent's source of time: the heartbeat and
// alloc-update loops, restart delays, shutdown delays and deployment
// health all wait on a Clock's timers, so tests run them on
// testing/synctest's virtual time or on a clock of their own.
//
// # Usage
//
//	var c clock.Clock = clock.System{}
//	t := c.NewTimer(time.Second)
//	defer t.Stop()
//	<-t.C()
//
// # Concurrency
//
// System is safe for concurrent use; a Timer belongs to its caller.
//
// # Invariants
//
//   - Nothing in the client reads time.Now or starts a time.Timer except
//     through a Clock.
package clock
