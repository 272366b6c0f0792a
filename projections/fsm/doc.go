// Package fsm owns the FSM that maintains the projections: for each
// committed entry it checks the preconditions, expands the events,
// appends them to the archive, applies them to every projection and
// records the applied index, all in one Pebble batch, then wakes
// watchers. It also owns the server's rebuilds and verifies of its
// projections (Rebuilder), which it runs with the engine of package
// projections/rebuild and switches live under its apply lock.
//
// # Usage
//
// A server opens its FSM with New (Config.AllowStale) and a Rebuilder
// over it, and hands the FSM to raft (it implements raftlog.Applier):
//
//	f, err := fsm.New(store, fsm.Config{Projections: all.Projections(), AllowStale: true})
//	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Clock: clock.System{}})
//	err = rb.RebuildStale(ctx) // before raft starts
//	go rb.Run(ctx)
//
// RebuildStale rebuilds, before raft starts, the projections another
// version wrote (FSM.Stale); Run executes the rebuilds and verifies
// operators Submit, and resumes those a stop interrupted; Status and Job
// report them. A rebuild builds into a scratch store beside the live one
// (rebuild.Build) while the live projections serve, catches up with the
// FSM, writes what it built into table files of the live store, then,
// under the FSM's apply lock, ingests them and commits what the build
// wrote since (switch.go). While the server applies entries, an
// operator's rebuild or verify lets RebuilderConfig.Parallelism
// projections replay at once (by default one fewer than the cores),
// leaving the serving server a core.
//
// With a Config.Clock, the FSM times each batch, entry and commit
// (timing.go: ordo_fsm_batch_apply_seconds, ordo_fsm_entry_apply_seconds,
// ordo_fsm_batch_commit_seconds) and logs slow ones; apply itself never
// reads the clock.
//
// # Concurrency
//
// FSM.Apply is called from raft's single FSM goroutine. FSM.Applied, the
// Notifier and the Rebuilder are safe from any goroutine; a Rebuilder runs
// one job at a time. Locks, in the order they are taken: Rebuilder.runMu
// (one job at a time), FSM.applyMu (Apply, Restore, a rebuild's last
// catch-up and switch), Rebuilder.mu, FSM.mu (stale and pending lists, the
// progress observer), the Notifier's.
//
// # Invariants
//
//   - The entries of one raft batch commit in one Pebble batch: a crash
//     leaves the archive, the projections and the applied index at a
//     whole index.
//   - Nothing applies to a stale projection: Apply refuses to run until it
//     has been rebuilt.
//   - A store records the newest ordo that wrote it (compat.go) and is never
//     opened by an older one: New refuses it (ErrDowngrade), Restore of
//     a newer server's snapshot halts the FSM.
//   - An entry holding an event this build cannot read is neither skipped
//     nor rejected: the FSM halts before it (halt.go), applies nothing
//     more and takes no snapshot, so a newer build resumes at that entry.
//   - A rebuild writes only its own scratch store, its markers and, at the
//     switch, the tables and metadata of the projections it rebuilt: it
//     appends nothing and moves no applied index. Readers see the old
//     projection or the rebuilt one, never a mix; a scratch store a crash
//     left is deleted on open and never serves.
package fsm
