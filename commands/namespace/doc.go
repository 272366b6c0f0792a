// Package namespace owns the namespace commands: apply (create or update)
// and delete, shaped like Nomad's namespace API.
//
// # Usage
//
// Build an Apply or Delete from a decoded request and run it with
// commands.Pipeline.Run.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Names match ValidName; the default namespace cannot be deleted.
//   - A delete carries an "exists" precondition, so a concurrent delete
//     yields 409 rather than a second event.
//   - A delete is refused (409, naming what remains) while the namespace
//     holds jobs that are not dead, variables or volumes, and carries
//     nsguard's namespace-empty precondition so the same is decided at
//     apply (N9).
package namespace
