// Package timetravel answers reads as the cluster stood at a past index.
// By default a versions store (storage/versions), fed every batch the FSM
// commits, holds every version of every projection row, so a read at any
// index it covers is a seek per key (versions.go). For the rest it keeps
// periodic checkpoints of a server's state store and materialises the
// projections at any applied index from the nearest one, caching the most
// recent results.
//
// # Usage
//
//	tt, err := timetravel.New(timetravel.Config{DataDir: dir, FSM: fsm, Projections: all.Projections()})
//	go tt.Run(ctx)                 // checkpoints every CheckpointEvery entries
//	defer tt.Close()               // before the live store closes
//	st, err := tt.At(ctx, 48213)   // the projections once index 48213 applied
//	defer st.Release()
//	job, err := jobs.Get(st.View(), "default", "web")
//	i, ok, err := tt.ResolveTime(t) // the last index at or before a time
//
// The agent wires it to the HTTP API (httpapi.Server.WithHistory), where
// every read takes at_index or at_time.
//
// # How a state is built
//
// At(i) first asks the versions store: when a span of the running
// projection versions covers i, the state is a reader over it, and nothing
// is built (waiting briefly for its writer when i is newer than what it
// holds). Otherwise: every CheckpointEvery applied entries (at most once per
// CheckpointMinInterval) Run flushes the live store's memtable and takes a
// Pebble checkpoint of it (hard links to its tables, a copy of its
// manifest) into DataDir/checkpoints/.tmp-N, opens that copy once to read
// the applied index it holds, and renames it DataDir/checkpoints/<index>.
// Published checkpoints are never written again. Pruning keeps the
// CheckpointsKept newest and, below them, SparseCheckpointsKept older ones
// CheckpointEvery×CheckpointsKept entries apart. At(i) copies the newest checkpoint
// at or below i into DataDir/timetravel/<i>-<n> (tables hard-linked, the
// rest copied: kv.CopyCheckpoint), or starts from an empty store when none
// is, and replays the live archive's events in (checkpoint, i] into it
// through the projections (projections.Replay), recording i as its applied
// index. The archive is append-only, so reading it beside the FSM is safe.
//
// # Concurrency
//
// All methods are safe for concurrent use. Concurrent reads of one index
// share one materialisation. A state is reference-counted: eviction from
// the cache (least recently used past CacheSize) closes it only once its
// last reader releases it. Pruning a checkpoint waits for readers copying
// it. Checkpoints are taken one at a time; Pebble lets them run beside the
// FSM's writes, which never wait.
//
// # Invariants
//
//   - Replay has no side effects (DESIGN.md invariant 6): only projections
//     run, into scratch stores this package owns; nothing is appended, no
//     processor sees a past event, the live store is only read.
//   - A materialised state's projections are those the live store held
//     once index i applied: Checksum-equal to replaying the archive from
//     empty up to i, whichever checkpoint it started from, and its
//     AppliedIndex is i.
//   - Scratch directories are removed on eviction, at Close, and at New
//     (for those a crash left).
package timetravel
