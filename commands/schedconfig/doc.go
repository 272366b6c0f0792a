// Package schedconfig owns the scheduler configuration command: Set
// replaces the cluster's SchedulerConfiguration, as Nomad's
// PUT /v1/operator/scheduler/configuration does, with an optional
// check-and-set on its modify index.
//
// # Usage
//
// Build a Set from a decoded request and run it with commands.Pipeline.Run.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - The algorithm is "binpack" or "spread" (empty means binpack).
//   - With CAS, the entry carries a modify-index precondition on the
//     configuration's row, so two writers at the same index cannot both
//     succeed; the loser gets a ConflictError.
package schedconfig
