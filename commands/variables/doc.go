// Package variables owns the variable commands — put (with an optional
// check-and-set index) and delete — shaped like Nomad's variables API, the
// validation of variable paths and items, and the Encrypter through which
// items are sealed before they are proposed and opened when read.
//
// # Usage
//
// The HTTP edge validates the path and items (ValidPath, ValidItems),
// seals the items with Seal — AES-256-GCM under the active root key, bound
// to the namespace and path — and runs a Put carrying only the ciphertext
// and key id. Reads open a stored variable with Open.
//
// # Concurrency
//
// Commands are values and Decide is pure. Seal and Open call the
// Encrypter, which must be safe for concurrent use.
//
// # Invariants
//
//   - No clear item is in a command, an event, the log or a log line:
//     only Seal's output (nonce and sealed JSON) is.
//   - A ciphertext opens only at the namespace and path it was sealed for
//     (the AAD), so a row copied elsewhere does not decrypt.
//   - A put carries the namespace's existence, the check-and-set index
//     (when given) and the namespace quota (N13) as preconditions, decided
//     again at apply.
package variables
