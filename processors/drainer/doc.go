// Package drainer owns the node drainer: a leader-only processor that
// moves allocations off draining nodes at the pace their jobs allow, as
// Nomad's drainer does. Starting a drain (commands/node.UpdateDrain) only
// records the drain strategy and makes the node ineligible; the drainer
// then marks allocations to migrate (node.MarkMigrate, which re-evaluates
// their jobs so the scheduler replaces them elsewhere) and, once nothing
// is left on a node, completes its drain (node.CompleteDrain: the strategy
// is cleared, the node stays ineligible).
//
// The rules (decide, a pure function of the projections and the leader's
// time): per job task group at most migrate.max_parallel (default 1)
// allocations are migrating at a time across every node — from being
// marked until the replacement runs, and is healthy when it belongs to a
// deployment; batch allocations are left to finish; system and sysbatch
// allocations go last, once nothing else is live on their node, unless the
// drain ignores system jobs; when a drain's deadline passes, every
// allocation left on the node is marked at once.
//
// # Usage
//
// Build a Drainer with New over the FSM and the command pipeline and hand
// it to the supervisor (it is a supervisor.Processor); Close unregisters
// its metrics (ordo_drainer_draining_nodes,
// ordo_drainer_allocs_marked_total{reason},
// ordo_drainer_drains_completed_total).
//
// # Concurrency
//
// Run is called by one goroutine at a time; the Drainer keeps no state
// between passes (each pass reads the projections afresh), so a new leader
// picks up drains where the last one left them. Seen may be called from
// any goroutine.
//
// # Invariants
//
//   - State changes only through the pipeline: marks carry each
//     allocation's modify index and completions the node's, so a decision
//     made on a stale snapshot is refused (409) and decided again.
//   - Time comes from Config.Clock only; decide reads no clock.
//   - Nothing is acted on before Run starts or after it returns.
package drainer
