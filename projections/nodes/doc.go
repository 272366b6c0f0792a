// Package nodes owns the nodes projection: every node registered with the
// scheduler, with the fields its client reports, its status, scheduling
// eligibility and drain, and the two indexes the reconnect rule (N1)
// compares: the index at which it last missed a heartbeat and the index at
// which it last reported updates to its allocations.
//
// # Usage
//
// The FSM applies Node* events through Projection; readers call Get,
// Resolve, List and Scan (a paged list's walk, by id from a key, either
// way) with a projections.View. Node and Stub marshal to JSON
// in the shape of Nomad's api.Node and api.NodeListStub.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Rows live in table Table keyed by node id, encoded with events.Marshal.
//   - Apply reads only the event and the Tx: status times are the entry's
//     leader time, the reconnect indexes (last missed heartbeat, last
//     alloc report; N1) the entry's index.
//   - Re-registering a node never changes its status, eligibility, drain or
//     reconnect indexes; only the client-reported fields change.
//   - A node with a drain strategy is ineligible.
package nodes
