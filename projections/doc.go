// Package projections owns the read models derived from the log and the FSM
// that maintains them: for each committed entry it checks the preconditions,
// appends the events to the archive, applies them to every projection and
// records the applied index, all in one Pebble batch, then wakes watchers.
//
// # Usage
//
// Each projection (sub-packages namespaces, servers, …; the full set is in
// package projections/all) implements Projection and writes rows through a
// Tx. Readers take a View (NewView over a kv.Snapshot) and use the
// projection's query functions. Blocking readers wait on the Notifier.
// Rebuild replays an archive into fresh projections; Checksum compares them.
//
// # Concurrency
//
// FSM.Apply is called from raft's single FSM goroutine. Views, the Notifier
// and FSM.Applied are safe from any goroutine.
//
// # Invariants
//
//   - Apply is deterministic: it reads only the entry and the projections; no
//     clock, no randomness, no map iteration order, no I/O besides the batch.
//   - A row carries the create and modify index of the entries that wrote it;
//     a table's index moves only when a row of it actually changed (N15).
//   - Deleting the projections and replaying the archive yields identical
//     projections (Checksum equal).
package projections
