// Package waittest is the one way ordo's tests wait for a condition that
// another goroutine or process makes true: poll it until a deadline.
//
// # Usage
//
//	waittest.For(t, 10*time.Second, "the leader", func() bool { return s.IsLeader() })
//
// For fails the test with what it waited for when the deadline passes;
// Poll only reports whether the condition held, for callers that fail in
// their own words or wait off the test goroutine. Code that takes a fake
// clock is tested with testing/synctest instead, and code that publishes
// a notification is waited on through it.
//
// # Concurrency
//
// Poll is safe to call from any goroutine; For calls t.Fatalf and belongs
// on the test goroutine.
//
// # Invariants
//
//   - The tests' one polling loop is here: a test that waits calls For or
//     Poll rather than sleeping in a loop of its own.
//   - The condition is checked first, then after a pause that grows from
//     1ms to 10ms, and once more at the deadline.
//
// It sits under storage, the lowest layer, so that tests of every layer
// may import it (tools/lint's import rule).
package waittest
