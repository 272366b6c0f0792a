// Package keystore owns the on-disk root key store of a server (N14):
// one file per root key under <data-dir>/keystore/<key-id>.json, holding the
// key material base64-encoded with the key's stable metadata (id,
// algorithm, create time) and nothing that changes later (a key's state
// lives in the log, projections/keyring). It also holds what only the
// material can do: AES-256-GCM sealing and opening, and the Ed25519
// workload identity signing key derived from the material.
//
// # Usage
//
//	ks, err := keystore.Open(filepath.Join(dataDir, "keystore"))
//	k, err := keystore.Generate(id, leaderTimeUnixNano)
//	err = ks.Put(k)              // atomic write, mode 0600
//	k, err = ks.Get(id)          // ErrNotFound when this server lacks it
//	ct, err := k.Seal(plain, aad) // 96-bit random nonce || ciphertext+tag
//
// # Concurrency
//
// A Store is safe for concurrent use; it caches keys it has read. A Key is
// immutable.
//
// # Invariants
//
//   - Algorithm is always "aes256-gcm" with 256-bit keys; there is no choice.
//   - Files are written to a temporary file, synced and renamed, so a
//     crash leaves either the whole key or none; mode 0600, directory 0700.
//   - A Key never formats its material: String, GoString, LogValue and
//     MarshalJSON show the id only. The material leaves a Key through
//     Material, used only to write the file and to answer another server.
package keystore
