// Package heartbeat owns the heartbeat monitor: a leader-only processor
// that tracks a time-to-live per node and, when a node misses it, submits
// node.UpdateStatus{down} (or disconnected, when the node runs allocations
// that tolerate disconnects) through the command pipeline.
//
// # Usage
//
// Build a Monitor with New, hand it to the supervisor (it is a
// supervisor.Processor) and to the HTTP API (it implements
// httpapi.Heartbeats): every node register and heartbeat calls Heartbeat,
// which resets the node's TTL and returns the TTL the node must heartbeat
// within. The TTL grows with the fleet so the leader absorbs at most
// MaxHeartbeatsPerSecond, plus a jitter drawn from a generator seeded with
// Config.Seed. When Run starts (leadership gained) every ready or
// initializing node gets FailoverTTL, so a failover does not mark the fleet
// down.
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
//   - State is rebuilt from the nodes projection each time Run starts and
//     dropped when it stops; nothing is acted on before Run starts.
//   - A missed heartbeat changes state only through the pipeline.
package heartbeat
