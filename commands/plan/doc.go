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
//   - The plan's deployment is the scheduler's copy; at apply it keeps a
//     paused or finished status stored meanwhile (the deployments
//     projection's expander), so it never undoes a user's pause or fail.
package plan
