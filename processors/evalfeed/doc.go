// Package evalfeed is the leader-only processor that keeps the eval broker
// fed: on leadership it enables the broker and restores every pending eval
// from the evals projection; then it follows the archive and enqueues each
// pending eval the log commits, unblocks blocked evals when capacity frees
// up (a node becomes ready or eligible, an allocation stops), and marks evals
// that exceeded the broker's delivery limit failed, with a delayed follow-up.
//
// # Usage
//
// Add a Feed to the supervisor beside the workers and the plan applier.
//
// # Concurrency
//
// Run is called by the supervisor, one generation at a time; it disables
// the broker when it returns.
//
// # Invariants
//
//   - It acts only on events after the index it restored from (replay has
//     no side effects) and changes evals only through commands.
//   - Unblocking is coarse: any capacity change unblocks every blocked eval
//     (class eligibility is recorded on the eval but not yet used to filter).
package evalfeed
