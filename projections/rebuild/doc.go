// Package rebuild is the engine that replays the archive into
// projections: Rebuild into an empty store, Replay forward from a store's
// applied index, BuildInto a verify's scratch store, and Build, an online
// rebuild into a scratch store beside a live store that package
// projections/fsm catches up and switches live. It applies every event
// exactly as the FSM did, so a rebuilt projection equals the live one
// (projections.Checksum).
//
// # Usage
//
//	dst, _ := kv.Open(dir, kv.DefaultConfig())
//	st, err := rebuild.Rebuild(live, dst, all.Projections(), 0, nil)
//
// One goroutine reads and decodes the archive; each projection applies it
// on its own goroutine (a lane, lanes.go), writing through a freshWriter
// (freshwriter.go) that keeps the rows a run of entries rewrites in
// memory and commits them once per batch. A from-scratch build keeps the
// rows of tables nothing reads in row logs (rowlog.go) and arenas
// (rowarena.go) outside Go's heap, and writes the result into table files
// the destination ingests whole (tablefiles.go). A CPU profile tells the
// lanes apart by the label lane=<projection>.
//
// # Concurrency
//
// Rebuild, Replay and BuildInto may run at once on different stores. A
// Build is driven by one goroutine; its lanes run their own goroutines,
// joined before each call returns.
//
// # Invariants
//
//   - A replay applies the events of each entry in order, to each
//     projection in order, with the entry's index and leader time, as the
//     FSM did.
//   - A projection replayed writes only its own tables (shadowWriter
//     refuses any other key with ErrForeignTable): no archive, no applied
//     index (but Rebuild's and Replay's own), no other projection.
//   - A Build writes only its scratch store until Switch, which replaces
//     the live tables of its projections in one ingest and one batch.
package rebuild
