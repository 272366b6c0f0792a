// Package nodepools owns the node pools projection: every node pool with
// its description and metadata, the two built-in pools ("default" and
// "all"), and the check that refuses deleting a pool still in use.
//
// # Usage
//
// The FSM applies NodePoolUpserted, NodePoolDeleted and NodeRegistered
// events through Projection (a node registered in a pool that has no row
// creates it, as Nomad's servers do); readers call Get and List with a
// projections.View, and Nodes and Jobs for what a pool holds. The node
// pool delete command carries UnusedPrecondition so the FSM decides again
// at apply.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Rows live in table Table keyed by name; the built-in pools have no
//     row: Get and List answer them from BuiltIn, so they exist on every
//     cluster from its first index and can be neither changed nor deleted.
//   - Everything is derived from events alone, so a replay rebuilds it.
package nodepools
