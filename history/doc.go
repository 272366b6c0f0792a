// Package history is the home of ordo's history tools: programs and
// libraries that read the archive (the Raft-ordered event log, package
// storage/archive) to explain, replay or check what the cluster decided in
// the past. They sit beside the processors: they may read the archive,
// rebuild projections into scratch stores and run the pure deciders
// (processors/scheduler) again, but they never append to the log.
//
//   - rerun: re-runs a recorded scheduling decision against the snapshot
//     it was made on and diffs the recomputed plan with what was committed.
//   - export: the portable history file (.olog): a slice of the archive,
//     optionally with the projections it starts from, written, checked and
//     replayed into a scratch store (ordo log export, ordo replay).
//
// # Usage
//
// Open the state store read-only (or take a snapshot of a live one) and
// hand it to the sub-package you need; each takes a kv.Reader.
//
// # Concurrency
//
// History tools read one kv.Reader; several may read the same store.
//
// # Invariants
//
//   - Replay has no side effects (DESIGN.md invariant 6): nothing here
//     writes to the store it reads; rebuilt projections go to scratch
//     stores the tools own and remove.
package history
