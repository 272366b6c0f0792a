// Package server owns the cluster membership commands: recording a server's
// raft and HTTP addresses in the log when it joins, so every server can find
// the leader's HTTP address.
//
// # Usage
//
// The leader runs Register for itself on gaining leadership and for each
// server it adds as a voter.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Registering a server whose addresses are already recorded appends nothing.
package server
