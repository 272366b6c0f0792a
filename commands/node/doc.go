// Package node owns the node commands: register, update status (what a
// heartbeat or the heartbeat monitor asks for), update eligibility, update
// drain and deregister, shaped like Nomad's Node RPCs; and the two the
// leader's node drainer submits: MarkMigrate (mark some allocations of
// draining nodes to migrate, with their jobs' evals) and CompleteDrain.
//
// # Usage
//
// Build a command from a decoded request and run it with
// commands.Pipeline.Run. Decide is pure: it reads the nodes projection and
// the leader time it is given.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Registering an existing node never changes its status (N1).
//   - A status update to ready on a disconnected node yields initializing,
//     and an initializing node that missed a heartbeat becomes ready only
//     once its last alloc update index is past its last missed heartbeat
//     index (N1). Every status, eligibility and drain decision carries the
//     node's modify index as a precondition, so a change in between (an
//     alloc update, a missed heartbeat) makes the entry a 409, not a stale
//     write.
//   - Starting a drain only records its strategy and makes the node
//     ineligible; allocations are marked to migrate by MarkMigrate, a few
//     at a time, and a completed drain leaves the node ineligible.
//   - A command that would change nothing appends nothing.
package node
