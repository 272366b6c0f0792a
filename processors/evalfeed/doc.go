// Package evalfeed is the leader-only processor that keeps the eval broker
// fed: on leadership it enables the broker and restores every pending eval
// from the evals projection; then it follows the archive and enqueues each
// pending eval the log commits, unblocks blocked evals when capacity they
// may use frees up (a node becomes ready or eligible, an allocation stops),
// and marks evals that exceeded the broker's delivery limit failed, with a
// delayed follow-up.
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
//   - Unblocking follows Nomad's class rule (unblocks): a capacity change
//     on a node — it registers, becomes ready or eligible, its drain stops
//     with MarkEligible, or an allocation on it stops or finishes — counts
//     for the node's computed class (events.ComputedClass), and unblocks a
//     blocked eval that escaped computed classes, has no entry for that
//     class (it might fit), or recorded the class as eligible; an entry of
//     false skips it. A blocked eval computed on a snapshot older than a
//     change it may use is unblocked as soon as it is seen, so no wake-up
//     is lost between a plan and its blocked eval; an unblock that fails is
//     tried again.
package evalfeed
