// Package keyring owns the root keyring's commands and runtime: rotate
// (and full rotate, N12), set a key's state, remove a key (the keyring GC's
// collect-only delete among them, N5); the Keyring, which encrypts and
// decrypts variables with the active root key (the Encrypter the variables
// engine uses), rotates on the leader by writing the key to the keystore
// before proposing its metadata, and signs and verifies workload
// identities (Ed25519 JWTs whose public keys are in the log and served as
// JWKS).
//
// # Usage
//
//	kr, _ := keyring.New(keyring.Config{Keystore: ks, Store: store, Pipeline: p})
//	id, ct, _ := kr.Encrypt(plain, aad)
//	plain, _ = kr.Decrypt(id, ct, aad)
//	_, newID, _ := kr.Rotate(ctx, req, full)
//	tok, kid, _ := kr.SignIdentity(allocID, task)
//	ns, job, group, task, ok, err := kr.VerifyIdentity(tok)
//
// # Concurrency
//
// Commands are values with pure Decide methods. A Keyring is safe for
// concurrent use.
//
// # Invariants
//
//   - Key material never enters a command, an event or a log line: the
//     log carries a key's id, state, times and Ed25519 public key.
//   - The active key cannot be removed, nor a key being rekeyed; a rotate
//     carries the previous active key's modify index, so two rotations
//     racing yield one 409.
//   - The GC's delete carries the live-allocation signing count of the key
//     (projections/allocs) as a precondition; a plan committing placements
//     carries the existence of its signing key.
package keyring
