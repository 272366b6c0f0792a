// Package plan owns the command the plan applier submits to commit what a
// scheduler decided: new allocations, stops, the deployment and the
// evaluation updates, in one entry.
//
// # Usage
//
// The plan applier verifies a plan against the latest state, builds a
// Commit from what still fits (with the modify index of each node it
// verified) and runs it through commands.Pipeline.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Every node that receives allocations carries a modify-index
//     precondition: if the node changed after the applier verified it (went
//     down, was drained), the entry is rejected and nothing is placed.
//   - Events are emitted in a fixed order: allocations placed, allocations
//     updated, deployment, evaluations.
//   - The plan's deployment never undoes a status it did not see: a
//     deployment stored paused or finished (a user paused or failed it,
//     the watcher ended it, after the scheduler read it) keeps its status
//     and description; the plan's groups (canaries placed) apply.
package plan
