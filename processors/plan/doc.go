// Package plan is the plan applier: a scheduler's plan is verified against
// the latest state and what still fits is committed. evaluate.go is the
// pure verifier (Evaluate, and the plan rejection tracker in tracker.go);
// applier.go is its runner, the single leader goroutine that takes plans
// from the workers one at a time and commits through the command path.
// Verification is pipelined with commits, as in Nomad: while one plan is in
// raft the next is verified against the latest state plus the in-flight
// plan's placements, and is committed once the in-flight one returns.
//
// # Usage
//
// Build an Applier (New), run it under the supervisor, and give it to the
// workers as their worker.Planner. When a Result's RefreshIndex is set,
// part of the plan was refused: the worker refreshes its snapshot to at
// least that index and schedules the eval again. Result.IneligibleNodes
// names nodes refused too often, which the applier marks ineligible.
//
// Evaluate may also be called on its own, as the data-driven tests in
// testdata/ do: a plan and a state in, the verdict out.
//
// # Concurrency
//
// Evaluate is a pure function and may run anywhere. Submit may be called
// from any goroutine; plans are evaluated serially in arrival order by
// Run, and committed in the same order, at most one in raft at a time (on
// a goroutine Run owns and joins). A Tracker belongs to the single Run
// goroutine and is not safe for concurrent use.
//
// # Invariants
//
//   - Evaluate reads only its arguments; the Tracker reads time only from
//     the now it is given, and starts no goroutine.
//   - A node's part of a plan is committed whole or not at all; a node
//     that only loses allocations always fits.
//   - No host port is given twice on a node: a placement whose port the
//     node reserves, a live allocation there holds, or another placement
//     of the plan (or of the plan in raft) takes is refused
//     (ReasonPortCollision), so racing workers never share a port.
//   - No allocation moves between nodes: a placement of an allocation the
//     state (or the plan still in raft) holds on another node refuses
//     that node's part (ReasonAllocElsewhere), which the tracker does not
//     count against the node.
//   - Plans are verified against the newest state, never the worker's, plus
//     the placements of the plan still in raft: only its placements, never
//     its stops, so a failed or already-applied in-flight commit can make
//     verification stricter but never lets a node be overcommitted.
//   - A plan refused while another was in flight is told to refresh past
//     that commit.
//   - A plan that commits whole commits with its eval updates in one entry;
//     a partial plan commits only its placements and stops, leaving the
//     eval to be re-planned past the index returned.
//   - The tracker is off unless enabled (as in Nomad); when on it names a
//     node after Threshold refusals within Window (15 in 10 minutes by
//     default), at most RatePerPeriod per RatePeriod with a burst of
//     Burst (5 per 30 minutes, burst 10). The nodes it names are marked
//     ineligible through a command, never by editing state.
package plan
