// Package keyring holds the root keyring's background work: the
// Replicator, which runs on every server and makes its keystore match the
// log (fetching the material of keys it lacks from peers, key by key, and
// removing the files of deleted keys — outside apply); and the Rekeyer,
// the leader-only job of a full rotation (N12) that re-encrypts every
// variable of a rekeying key with the active key and then marks the old
// key inactive.
//
// # Usage
//
// Run the Replicator under the agent on every server; add the Rekeyer to
// the supervisor. The first root key is made by the leader's bootstrap
// (processors/bootstrap), before the default namespace.
//
// # Concurrency
//
// Each type's Run is called by one goroutine at a time, and the Rekeyer's
// Step (which Run calls) likewise: it keeps its page cursor unguarded.
//
// # Invariants
//
//   - Replication is per key: a key that fails to arrive is logged with
//     its id and counted, and the loop goes on to the next key; failed
//     rounds retry with exponential backoff.
//   - A fetched key is installed only when its material derives the
//     Ed25519 public key the log records for it.
//   - The Rekeyer's progress lives in the log (the variables' key ids and
//     the key's state), so a new leader resumes where the old one stopped.
package keyring
