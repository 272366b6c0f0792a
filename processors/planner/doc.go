// Package planner owns the plan applier's runner: the single leader
// goroutine that takes plans from the workers one at a time, re-checks each
// against the latest state (planapply.Evaluate), and commits what still fits
// through the command path. Verification is pipelined with commits, as in
// Nomad: while one plan is in raft the next is verified against the latest
// state plus the in-flight plan's placements, and is committed once the
// in-flight one returns.
//
// # Usage
//
// Build an Applier, run it under the supervisor, and give it to the
// workers as their worker.Planner.
//
// # Concurrency
//
// Submit may be called from any goroutine; plans are evaluated serially in
// arrival order by Run, and committed in the same order, at most one in
// raft at a time (on a goroutine Run owns and joins).
//
// # Invariants
//
//   - Plans are verified against the newest state, never the worker's, plus
//     the placements of the plan still in raft: only its placements, never
//     its stops, so a failed or already-applied in-flight commit can make
//     verification stricter but never lets a node be overcommitted.
//   - A plan refused while another was in flight is told to refresh past
//     that commit.
//   - A plan that commits whole commits with its eval updates in one entry;
//     a partial plan commits only its placements and stops, leaving the
//     eval to be re-planned past the index returned.
//   - Nodes named by the rejection tracker (N11) are marked ineligible
//     through a command, never by editing state.
package planner
