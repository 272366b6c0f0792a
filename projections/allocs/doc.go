// Package allocs owns the allocations projection: every allocation with
// what the servers want of it (desired status and transition) and what its
// node reports (client status, task states, deployment health), indexed by
// node, job, eval and creation order.
//
// # Usage
//
// The FSM applies Allocs* events through Projection; readers call Get,
// Resolve, Scan, ByNode, ByJob and ByEval with a projections.View. Alloc
// marshals to JSON as Nomad's api.Allocation, Stub as api.AllocationListStub.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Table holds one row per alloc keyed by id (events.Allocation encoded
//     with events.Marshal). ByNodeTable ("<node>\x00<id>"), ByJobTable
//     ("<ns>\x00<job>\x00<id>"), ByEvalTable ("<eval>\x00<id>") and
//     ByCreateTable (order.Key(create index, id)) hold exactly one row per
//     alloc: a delete, or a re-placement that moves an alloc, removes the
//     old index rows.
//   - AllocsPlaced writes allocs whole, keeping an existing row's create
//     index, and sets NextAllocation on each one's PreviousAllocation.
//   - AllocsDesiredUpdated and AllocsClientUpdated patch existing rows and
//     ignore unknown ids; a client update applies only to allocs on the
//     reporting node. Patches set ModifyTime to the entry's leader time.
//   - BySigningKeyTable indexes live allocs by the root key that signed
//     their identity and SigningKeyLiveTable counts them per key (N5,
//     signing.go); a terminal or deleted alloc leaves both.
//   - Apply reads only the event and the Tx.
package allocs
