// Package heartbeat owns the heartbeat monitor: a leader-only processor
// that tracks a time-to-live per node and, when a node misses it, changes
// the node's status through the command pipeline (node.UpdateStatus): down,
// or disconnected when the node runs allocations that tolerate disconnects
// (N1) — and then down if it has not heartbeated by the end of its
// disconnect window, as Nomad does.
//
// # Usage
//
// Build a Monitor with New, hand it to the supervisor (it is a
// supervisor.Processor) and to the HTTP API (it implements
// httpapi.Heartbeats): every node register and heartbeat calls Heartbeat,
// which resets the node's TTL and returns the TTL the node must heartbeat
// within. The TTL grows with the fleet so the leader absorbs at most
// MaxHeartbeatsPerSecond, plus a jitter drawn from a generator seeded with
// Config.Seed. When Run starts (leadership gained) every node Config.Nodes
// lists (ready, initializing or disconnected) gets FailoverTTL, so a
// failover does not mark the fleet down.
//
// A missed TTL runs one command (miss.go), decided on the pipeline's view:
//
//   - a ready or initializing node is asked down with MissedHeartbeat, and
//     node.UpdateStatus makes it disconnected instead when one of its live
//     allocations' groups tolerates disconnects (a disconnect block, or
//     max_client_disconnect). The monitor then tracks it again with its
//     disconnect window: the longest lost_after of those groups;
//   - a disconnected node whose window has passed (counted from when it
//     became disconnected), or that runs no tolerant allocation any more,
//     is marked down, still as a missed heartbeat;
//   - a disconnected node within its window (a new leader's first miss) is
//     left as it is and tracked for the rest of its window.
//
// A heartbeat before the window ends resets the node's TTL as any
// heartbeat does, so it is not marked down. A group with a disconnect
// block but no lost_after never loses its allocations (as the scheduler
// reads it), so a node running one stays disconnected, untracked, until it
// heartbeats.
//
// # Concurrency
//
// Heartbeat, Forget and Tracked may be called from any goroutine while Run
// works; Run is called by one goroutine at a time. One lock (mu) guards the
// deadlines and the jitter generator; it is never held while a command runs.
//
// # Invariants
//
//   - Time comes from Config.Clock only, so tests drive it with a fake.
//   - State is rebuilt from the nodes Config.Nodes lists each time Run
//     starts and dropped when it stops; nothing is acted on before Run
//     starts.
//   - A missed heartbeat changes state only through the pipeline, and what
//     it does is decided on the view the command is decided on: whether
//     the node is disconnected, tolerant, and for how long.
//   - One deadline per node: a heartbeat replaces a disconnect window, and
//     a window never replaces a deadline a heartbeat set meanwhile.
package heartbeat
