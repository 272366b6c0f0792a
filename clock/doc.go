// Package clock is ordo's one source of time for components that wait or
// stamp: processors, the mirror and the client agent take a Clock in their
// Config, so tests drive them with clocktest.Clock (which moves only when
// told) or run them on testing/synctest's virtual time.
//
// It is a top-level package on the lowest layer of the import rule
// (tools/lint): it imports nothing of ordo, and both the servers' packages
// and the client agent (which must not import storage) may use it; events
// and projections stay pure and take time from the entry instead.
//
// # Usage
//
//	cfg := gc.DefaultConfig() // Clock: clock.System{}
//	cfg.Clock = clocktest.NewClock(time.Unix(1_700_000_000, 0)) // in a test
//
//	t := c.NewTimer(time.Second)
//	defer t.Stop()
//	select {
//	case <-t.C():
//	case <-ctx.Done():
//	}
//
// # Concurrency
//
// System is safe for concurrent use; a Timer belongs to its caller.
//
// # Invariants
//
//   - A component given a Clock reads time.Now and starts timers only
//     through it, so a fake clock controls every wait it makes.
package clock
