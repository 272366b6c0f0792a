// Package tokenexpiry is the leader-only processor that deletes expired ACL
// tokens (N10).
//
// # Usage
//
// Build it with New and hand it to the supervisor, which runs it while
// this server leads. Every Interval it submits acl.ExpireTokens through the
// pipeline; the command decides from the leader's time and the projection
// deletes only tokens expired at the entry's time.
//
// # Concurrency
//
// Run is called by one goroutine (the supervisor's); it owns no other.
//
// # Invariants
//
//   - The processor never compares a token's expiry with its own clock: its
//     clock only paces the ticks. The cutoff is the entry's leader time.
package tokenexpiry
