// Package schedstate adapts the projections to the scheduler: a
// scheduler.State over a consistent snapshot of the state store, and the
// Source that workers and the plan applier take snapshots from.
//
// # Usage
//
// Build a Source with the store and the FSM's notifier; hand it to the
// workers (worker.StateSource) and the plan applier (planner.States).
//
// # Concurrency
//
// A Source is safe for concurrent use; each State belongs to one goroutine
// and must be released.
//
// # Invariants
//
//   - A State reads one Pebble snapshot, so every answer reflects the same
//     applied index, the one Index reports.
//   - A read error (a corrupt row) is recorded in Err and the State answers
//     as if the row were absent; callers check Err before trusting a plan.
package schedstate
