// Package nodepool owns the node pool commands: apply (create or update)
// and delete, shaped like Nomad's node pool API.
//
// # Usage
//
// Build an Apply or Delete from a decoded request and run it with
// commands.Pipeline.Run.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Names match ValidName; the built-in pools "default" and "all" can be
//     neither changed nor deleted.
//   - A delete is refused (409, naming what remains) while a node or a
//     job is in the pool, and carries nodepools.UnusedPrecondition so the
//     same is decided again at apply.
package nodepool
