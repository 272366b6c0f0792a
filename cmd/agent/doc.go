// Package agent wires a server together: the state store, the FSM and its
// projections, the raft node, the command pipeline, the HTTP API, cluster
// formation (bootstrap-expect and join) and the leader-only processors.
//
// # Usage
//
// Start an Agent with a Config (DevConfig for `ordo agent -dev`) and call
// Shutdown to stop it. Tests start several on 127.0.0.1 with port 0.
//
// # Concurrency
//
// An Agent's methods are safe for concurrent use. Its goroutines (HTTP
// server, join loop, supervisor) are owned by the agent and joined by Shutdown.
//
// # Invariants
//
//   - A server's data directory holds raft/ (log, stable store, snapshots),
//     state/ (archive and projections) and node-id; a client's (the same
//     directory in -dev and for both roles) adds its local state and the
//     allocation directories under alloc/ (docs/client.md); nothing else is
//     written.
//   - Servers bootstrap only with the same list of expected servers, and
//     only when they have no raft state.
//   - Servers join each other only with the cluster secret (cluster.go),
//     which a server that forms or joins a cluster must have; a joined
//     server is a non-voter until the leader's autopilot promotes it.
//   - A graceful Shutdown of a leader of several voters hands leadership
//     over first.
package agent
