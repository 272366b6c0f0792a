// Package planner owns the plan applier's runner: the single leader
// goroutine that takes plans from the workers one at a time, re-checks each
// against the latest state (planapply.Evaluate), and commits what still fits
// through the command path.
//
// # Usage
//
// Build an Applier, run it under the supervisor, and give it to the
// workers as their worker.Planner.
//
// # Concurrency
//
// Submit may be called from any goroutine; plans are evaluated and
// committed serially, in arrival order, by Run.
//
// # Invariants
//
//   - Plans are verified against the newest state, never the worker's.
//   - A plan that commits whole commits with its eval updates in one entry;
//     a partial plan commits only its placements and stops, leaving the
//     eval to be re-planned past the index returned.
//   - Nodes named by the rejection tracker (N11) are marked ineligible
//     through a command, never by editing state.
package planner
