// Package raftlog owns the replicated log: a hashicorp/raft node over TCP with
// the Pebble log and stable stores of package raftstore and a file snapshot
// store, wrapped as Append(ctx, data) → (result, index) and calling an Applier
// (the FSM in package projections) with every committed entry.
//
// # Usage
//
// Open a Node with a Config and an Applier. In dev mode set Bootstrap to form
// a one-server cluster at once; otherwise call BootstrapCluster with the
// agreed servers once, or let an existing leader AddNonvoter this node,
// which RunAutopilot (on the leader) promotes once it has caught up
// (autopilot.go). Membership changes go through AddNonvoter, RemovePeer
// and TransferLeadership, which refuse a change that could leave the
// cluster without a quorum. Append on the leader returns ErrNotLeader
// elsewhere; callers forward.
//
// Before deciding a command from the state the FSM holds, call AwaitReady;
// before answering a read from it, ConsistentRead (read.go). Both return
// ErrNotLeader on a server that does not lead. Rounds (rounds.go) shares
// one confirmation among the callers waiting at once.
//
// # Concurrency
//
// A Node is safe for concurrent use. The Applier is called from one goroutine
// at a time, in log order.
//
// # Invariants
//
//   - Every command entry reaches Applier.Apply exactly once per start, in
//     order, batched; configuration entries are not passed on.
//   - Leadership changes are delivered, in order, on the channel from
//     LeaderChanges; a gain only once the new term's barrier has applied,
//     so every entry of earlier terms is in the state.
//   - After ConsistentRead returns nil, the state reflects every entry
//     acknowledged before the call, on any server: the node led in a term
//     whose barrier had applied, and a quorum confirmed it still led by
//     committing a barrier appended after the call (none for a sole voter).
package raftlog
