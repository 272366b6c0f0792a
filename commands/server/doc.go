// Package server owns the cluster-level commands: recording a server's
// raft and HTTP addresses in the log when it joins, so every server can find
// the leader's HTTP address, and recording an operator's snapshot restore,
// so the archive says where its history was replaced.
//
// # Usage
//
// The leader runs Register for itself on gaining leadership and for each
// server it adds as a voter, and RecordRestore once it has installed a
// snapshot file (history/backup). The API runs Remove after an operator
// removed a server from the raft configuration.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Registering a server whose addresses are already recorded appends nothing.
//   - Removing a server that is not recorded appends nothing.
//   - A recorded restore appends one SnapshotRestored event, as given.
package server
