// Package gc decides garbage collection: which evaluations, allocations,
// jobs, nodes and deployments are old and finished enough to remove, as a
// command whose events say what is removed (EvalsDeleted, AllocsDeleted,
// JobDeregistered with Purge, NodeDeregistered, DeploymentsDeleted).
//
// # Usage
//
// The GC processor (processors/gc) runs Collect through the command
// pipeline on the leader, periodically with the configured Thresholds and
// on demand (PUT /v1/system/gc) with Force, until a run collects nothing.
//
// # Concurrency
//
// Pure: Decide reads a snapshot and the leader time it is given.
//
// # Invariants
//
//   - Age is judged from leader times recorded in state (an eval's,
//     alloc's or deployment's ModifyTime, a node's StatusUpdatedAt, a job's
//     SubmitTime), against the decision's leader time: never a local clock
//     at apply.
//   - Nothing a live job or allocation still references is removed: an
//     eval or alloc referenced by a non-terminal alloc (EvalID,
//     FollowupEvalID, PreviousAllocation), the evals and allocs of a live
//     batch job (its complete allocs say what already ran), a node with a
//     non-terminal alloc, a deployment a non-terminal alloc belongs to or
//     the latest deployment of a job that is not dead.
//   - Every removed row is carried as a ModifyIndex precondition, so
//     anything that changed between the decision and apply (a job
//     re-registered, an alloc placed on a node) refuses the whole entry;
//     the next run decides again.
//   - A run that finds nothing appends nothing (N15: no table index moves,
//     no blocking query wakes).
package gc
