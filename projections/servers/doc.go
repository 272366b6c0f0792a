// Package servers owns the servers projection: each server that joined the
// raft configuration with the raft and HTTP addresses it is reached at, so
// any server can find the leader's HTTP address to forward requests to.
//
// # Usage
//
// The FSM applies ServerRegistered and ServerRemoved; readers call Get and List.
//
// # Concurrency
//
// Stateless: safe for concurrent use.
//
// # Invariants
//
//   - Rows live in table Table keyed by raft server id.
package servers
