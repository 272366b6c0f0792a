// Package projections owns the read models derived from the log: the
// Projection interface every projection implements, the Tx a projection
// writes through while one entry is applied, the View readers read
// through, rows and their codecs, the Notifier that wakes blocking
// readers, and the registries projection packages fill at init
// (RegisterCheck, RegisterExpander, ScanOnly, WatchKeys). The FSM that
// applies entries is package projections/fsm; the engine that rebuilds
// projections from the archive is package projections/rebuild.
//
// # Usage
//
// Each projection (sub-packages namespaces, servers, …; the full set is in
// package projections/all) implements Projection and writes rows through a
// Tx: as bytes (Get, Put, PutIndex) or, for rows it rewrites often, as
// decoded values through a Codec (GetValue, PutValue), which a replay keeps
// decoded across entries and encodes once per commit (value.go). Readers
// take a View (NewView over a kv.Snapshot) and use the projection's query
// functions. Blocking readers wait on the Notifier. Checksum hashes a
// projection's tables, to compare a store with a rebuild of it.
//
// Projection packages import this package only, never the FSM or the
// rebuild engine; tools/lint enforces it.
//
// # Concurrency
//
// A Tx is used by one goroutine, the one applying the entry. Views over a
// snapshot and the Notifier are safe from any goroutine. The registries
// are written only from init functions and read-only afterwards.
//
// # Invariants
//
//   - Apply is deterministic: it reads only the entry and the projections; no
//     clock, no randomness, no map iteration order, no I/O besides the Tx.
//   - A value GetValue returns or PutValue is given is shared with the
//     replay's writer: nobody changes it; a projection changes a copy and
//     puts that. A row written as a value is the row Put of its encoding
//     writes.
//   - A row carries the create and modify index of the entries that wrote it;
//     a table's index moves only when a row of it actually changed (N15).
//   - Each projection reads and writes only its own tables
//     (Projection.Tables): a rebuild of some projections relies on it.
//   - Deleting the projections and replaying the archive yields identical
//     projections (Checksum equal).
package projections
