// Package eval owns the commands that change evaluations outside a plan:
// unblocking blocked evals when capacity frees up, and failing evals that
// exceeded the broker's delivery limit (with their follow-up).
//
// # Usage
//
// Run an Update through commands.Pipeline with the evals as they should
// become and the modify index each was read at.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Each updated eval carries a modify-index precondition, so an eval
//     changed meanwhile (completed by a plan, say) is not overwritten.
package eval
