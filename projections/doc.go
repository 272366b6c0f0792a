// Package projections owns the read models derived from the log and the FSM
// that maintains them: for each committed entry it checks the preconditions,
// appends the events to the archive, applies them to every projection and
// records the applied index, all in one Pebble batch, then wakes watchers.
// It also rebuilds projections from the archive (Rebuilder).
//
// # Usage
//
// Each projection (sub-packages namespaces, servers, …; the full set is in
// package projections/all) implements Projection and writes rows through a
// Tx: as bytes (Get, Put, PutIndex) or, for rows it rewrites often, as
// decoded values through a Codec (GetValue, PutValue), which a replay keeps
// decoded across entries and encodes once per commit (value.go). Readers take a View (NewView over a kv.Snapshot) and use the
// projection's query functions. Blocking readers wait on the Notifier.
// Rebuild replays an archive into fresh projections; Checksum compares them.
//
// A server opens its FSM with FSMConfig.AllowStale and a Rebuilder over it:
// RebuildStale rebuilds, before raft starts, the projections another
// version wrote (FSM.Stale); Run executes the rebuilds and verifies
// operators Submit, and resumes those a stop interrupted; Status and Job
// report them. A rebuild builds into a scratch store beside the live one
// (shadow.go; kv.Store.OpenScratch) while the live projections serve,
// catches up with the FSM, writes what it built into table files of the
// live store, then, under the FSM's apply lock, ingests them and commits
// what the build wrote since (switch.go). Each
// projection replays on its own goroutine (lanes.go); while the server
// applies entries, an operator's rebuild or verify lets
// RebuilderConfig.Parallelism of them apply at once (by default one fewer
// than the cores), leaving the serving server a core.
//
// # Concurrency
//
// FSM.Apply is called from raft's single FSM goroutine. Views, the Notifier
// and FSM.Applied are safe from any goroutine. A Rebuilder is safe from any
// goroutine; it runs one job at a time. Locks, in the order they are taken:
// Rebuilder.runMu (one job at a time), FSM.applyMu (Apply, Restore, a
// rebuild's last catch-up and switch), Rebuilder.mu, FSM.mu (stale and
// pending lists, the progress observer), Notifier.mu.
//
// # Invariants
//
//   - Apply is deterministic: it reads only the entry and the projections; no
//     clock, no randomness, no map iteration order, no I/O besides the batch.
//   - A value GetValue returns or PutValue is given is shared with the
//     replay's writer: nobody changes it; a projection changes a copy and
//     puts that. A row written as a value is the row Put of its encoding
//     writes.
//   - A row carries the create and modify index of the entries that wrote it;
//     a table's index moves only when a row of it actually changed (N15).
//   - Deleting the projections and replaying the archive yields identical
//     projections (Checksum equal).
//   - Nothing applies to a stale projection: Apply refuses to run until it
//     has been rebuilt.
//   - A store records the newest ordo that wrote it (compat.go) and is never
//     opened by an older one: NewFSM refuses it (ErrDowngrade), Restore of
//     a newer server's snapshot halts the FSM.
//   - An entry holding an event this build cannot read is neither skipped
//     nor rejected: the FSM halts before it (halt.go), applies nothing
//     more and takes no snapshot, so a newer build resumes at that entry.
//   - A rebuild writes only its own scratch store, its markers and, at the
//     switch, the tables and metadata of the projections it rebuilt: it
//     appends nothing and moves no applied index. Readers see the old
//     projection or the rebuilt one, never a mix; a scratch store a crash
//     left is deleted on open and never serves.
package projections
