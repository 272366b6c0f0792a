// Package csi owns the CSI volume commands — register (create or merge,
// N18), deregister (exact id, refused while claimed unless forced, N19),
// detach, and the claim updates the volume watcher makes — their
// validation, and the volume specification files `ordo volume register`
// reads (HCL or JSON).
//
// # Usage
//
// The HTTP edge decodes a volume (or the CLI parses a file with
// ParseSpec and sends it as JSON) and runs Register; Deregister, Detach
// and UpdateClaims run the same way. Decide is pure: it reads the CSI
// projection in the view it is given.
//
// # Concurrency
//
// Commands are values; Decide is pure and safe for concurrent use.
//
// # Invariants
//
//   - A register of an existing volume changes only user-settable fields,
//     refuses changes to immutable ones (plugin, external id, topology
//     request, a capacity outside the requested range) and capabilities
//     that no longer cover a claim, and carries the volume's modify index
//     as a precondition; a new volume carries "absent".
//   - A deregister names the exact volume and carries its modify index,
//     so a claim made meanwhile refuses it at apply.
//   - Secrets travel only in the event's Secrets field (declared
//     sensitive); no error message quotes a secret value.
package csi
