// Package keyring owns the root key metadata projection (N14): every root
// key's id, algorithm, state and times, and the ids of deleted keys. The
// key material itself is never in the log nor here; it lives in each
// server's keystore (storage/keystore).
//
// # Usage
//
// The FSM applies RootKeyUpserted and RootKeyDeleted through Projection;
// readers call Get, List, Active and Deleted with a projections.View.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Table holds one row per live key, keyed by id; DeletedTable one empty
//     row per deleted key, so every server (even one that was down when the
//     delete applied) knows which keystore files to remove.
//   - At most one key is active when the commands that write keys are used
//     (commands/keyring demotes the previous active key in the same entry).
package keyring
