// Package worker owns the scheduler workers: leader-only processors that
// take evaluations from the eval broker, schedule each on a snapshot of the
// projections at the eval's index or later, and hand the plan to the plan
// applier.
//
// # Usage
//
// Build a Worker per core with the broker, a StateSource over the
// projections and the Planner (the plan applier), and run it under the
// supervisor.
//
// # Concurrency
//
// Workers run concurrently with each other; each handles one eval at a
// time. The broker keeps two evals of one job from running at once.
//
// # Invariants
//
//   - N2: an eval is scheduled only on a snapshot at its ModifyIndex or
//     later. A worker whose state is behind waits up to SyncLimit, then
//     hands the eval back with a long backoff that ends early when the
//     state catches up.
//   - A cancelled context is a shutdown: the eval goes back to the broker
//     and Run returns nil.
//   - Every change goes through the planner's commit; the eval's own
//     update (status, snapshot index, queued counts, links) commits with
//     the plan, in the same entry.
package worker
