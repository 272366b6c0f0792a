// Package alloc owns the allocation commands: a user stopping an
// allocation (optionally without its tasks' shutdown delay, N23) and a
// client reporting what became of the allocations on its node, shaped like
// Nomad's Alloc.Stop and Node.UpdateAlloc RPCs.
//
// # Usage
//
// Build a command from a decoded request and run it with
// commands.Pipeline.Run. Decide is pure: it reads the allocs and nodes
// projections and the leader time and ids it is given.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Stop records the stop as the alloc's desired status and, with
//     NoShutdownDelay, as its DesiredTransition, and creates one pending
//     eval (TriggeredBy alloc-stop) for the alloc's job in the same entry;
//     it carries the alloc's modify index as a precondition.
//   - ClientUpdate accepts only allocs on the reporting node and records,
//     in the same entry, the node's NodeAllocsUpdated marker, which
//     reconnect ordering (N1) compares with its last missed heartbeat.
package alloc
