// Package planapply owns the pure half of the plan applier: re-checking a
// scheduler's plan against the latest state before it is committed, and
// the plan rejection tracker (N11).
//
// # Usage
//
// The plan applier (a serial runner) takes the latest snapshot, calls
// Evaluate (or Evaluator.Evaluate, which also feeds the Tracker) and
// commits the Result's placements, stops, updates, deployment and
// follow-ups through the command path. When Result.RefreshIndex is set,
// part of the plan was rejected: the worker refreshes its snapshot to at
// least that index and schedules the eval again. Result.IneligibleNodes
// names nodes rejected too often, to be marked ineligible.
//
// # Concurrency
//
// Evaluate is a pure function and may run anywhere. A Tracker belongs to
// the single plan applier goroutine and is not safe for concurrent use.
//
// # Invariants
//
//   - Evaluate reads only its arguments; the Tracker reads time only from
//     the now it is given, and starts no goroutine.
//   - A node's part of a plan is committed whole or not at all; a node
//     that only loses allocations always fits.
//   - No allocation moves between nodes: a placement of an allocation the
//     state (or the plan still in raft) holds on another node refuses
//     that node's part (ReasonAllocElsewhere), which the tracker does not
//     count against the node.
//   - The tracker is off unless enabled (as in Nomad); when on it names a
//     node after Threshold rejections within Window (15 in 10 minutes by
//     default), at most RatePerPeriod per RatePeriod with a burst of Burst
//     (5 per 30 minutes, burst 10).
package planapply
