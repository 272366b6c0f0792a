// Package timetravel answers reads as the cluster stood at a past index.
// A versions store (storage/versions) holds every version of every
// projection row, each at the index of the entry that wrote it, so a read
// at any index since the log began is a seek per key: nothing is copied,
// built or replayed when it is read.
//
// # Usage
//
//	tt, err := timetravel.New(timetravel.Config{DataDir: dir, FSM: fsm, Projections: all.Projections()})
//	go tt.Run(ctx)                 // backfills what the store lacks
//	defer tt.Close()               // before the live store closes
//	st, err := tt.At(ctx, 48213)   // the projections once index 48213 applied
//	defer st.Release()
//	job, err := jobs.Get(st.View(), "default", "web")
//	i, ok, err := tt.ResolveTime(t) // the last index at or before a time
//
// The agent wires it to the HTTP API (httpapi.Server.WithHistory), where
// every read takes at_index or at_time, and GET /v1/operator/history
// answers Status.
//
// # How the store is kept
//
// The FSM's commit hook hands every committed batch to a writer, which
// appends its writes as versions (each at its entry's index) and extends
// the newest span. After a gap — a batch dropped because the writer fell
// behind, a start after a crash (the store keeps no write-ahead log), a
// restore, a projection rebuild's switch — the writer seeds a new span
// from a snapshot of the live state. Run then backfills, one range at a
// time, whatever lies between the history's first index and the newest
// span (all of the past on a server that had history before the store
// was created; the gap before a later span): it replays the archive's
// events through the projections into a scratch store, entry by entry as
// the FSM applied them, from nothing (or from the store's own state at
// the gap's start) and writes each batch as versions into a fill
// (versions.BeginFill) that reads do not see until it ends. A restore or
// new projection versions make every version held describe another
// history: the store is wiped and seeded again, and the backfill rebuilds
// the whole past from the restored archive.
//
// # Reads
//
// At(i) returns a reader at i when a span of the running projection
// versions covers i. A read at an index being backfilled, or one the
// writer has not reached after a short wait, is a *NotServedError that is
// Retryable (the HTTP API answers 503, naming at_index or at_time and how
// far the backfill is); a read older than VersionsKept keeps, or before
// a Config.Base, is one that is not (400, naming the oldest index served).
// Nothing is ever answered from a state other than the one asked for.
//
// # Concurrency
//
// All methods are safe for concurrent use. Two goroutines write the
// store: the writer (started by New, joined by Close) and the backfill
// (Run). The backfill begins a fill only under versionKeeper.fmu; the
// writer holds it while it stops a fill and wipes the store.
//
// # Invariants
//
//   - Replay has no side effects (DESIGN.md invariant 6): a backfill runs
//     the projections only, into a scratch store this package owns;
//     nothing is appended, no processor sees a past event, the live store
//     is only read.
//   - A state read at i holds the projections the live store held once
//     index i applied: Checksum-equal to replaying the archive from empty
//     up to i, and its AppliedIndex is i.
//   - A fill half done changes no answer: its versions are hidden until it
//     ends, and one cut short is deleted before the next begins.
package timetravel
