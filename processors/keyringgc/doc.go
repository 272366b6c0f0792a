// Package keyringgc is the leader-only keyring garbage collector (N5): it
// deletes a root key only when the key is inactive, older than a
// threshold, and no live (non-terminal) allocation was signed with it. The
// delete carries the live signing count of the key as a precondition, so
// it loses any race with a plan placing an allocation signed by the key.
// Every server removes the key's file when it sees the delete
// (processors/keyring.Replicator), outside apply.
//
// # Usage
//
// Add a GC to the supervisor; Collect runs one pass on demand.
//
// # Concurrency
//
// Run is called by the supervisor, one generation at a time; Collect may
// be called concurrently with it.
//
// # Invariants
//
//   - Only inactive keys are ever collected: never the active key, nor one
//     being rekeyed, nor a deprecated key kept to verify old identities.
package keyringgc
