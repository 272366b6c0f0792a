// Package state is the client agent's local persistence: the node's id
// and, per allocation, what the client needs to pick up where it left off
// after a restart — the allocation and the job version it runs, and per
// task its reported state (with events and restart count), the restart
// policy's window, the handle state to re-attach with, and which start
// attempt is in flight.
//
// # Layout
//
// Under the client's data directory:
//
//	client/node-id              the node's id, minted on first start
//	client/watch-index          the newest index of the servers' allocation list acted on
//	client/allocs/<alloc>.json  one record per allocation (Alloc)
//
// Each record is JSON, replaced atomically: written to a temporary file in
// the same directory, synced, renamed over the old one, and the directory
// synced. A crash leaves the old record or the new one, never a mix.
//
// # Usage
//
//	st, err := state.Open(dataDir)
//	id, err := st.NodeID()
//	err = st.PutAlloc(rec)
//	recs, bad, err := st.Allocs()
//	err = st.DeleteAlloc(allocID)
//	seen, err := st.WatchIndex()
//	err = st.PutWatchIndex(seen)
//
// # Concurrency
//
// A Store is safe for concurrent use. Writes of one allocation's record
// must be ordered by the caller (the alloc runner holds its lock across
// PutAlloc); writes of different allocations run in parallel.
//
// # Invariants
//
//   - PutAlloc returns only once the record is durable.
//   - A task start attempt is recorded (Task.Starting) before the driver
//     is asked to start it, so a client that crashes in between knows the
//     attempt may have run and never starts it again (alloc runner's rule).
package state
