// Package commands owns the write path: decoding a request with a body
// limit, validating it, deciding its events and preconditions against a
// snapshot of the projections, proposing the entry to the log and waiting
// for it to apply. Handlers per domain live in sub-packages (namespace, …);
// httpapi serves them over HTTP.
//
// # Usage
//
// A domain command implements Command: Validate looks at the request alone,
// Decide is a pure function of (view, request, leader time, ids). Run a
// command with Pipeline.Run; map its error to a status with Status.
//
// # Concurrency
//
// A Pipeline is safe for concurrent use.
//
// # Invariants
//
//   - Nothing reaches the log unless Validate and Decide succeeded.
//   - IDs and the entry's time are minted here, on the leader, never at apply.
//   - A command id already applied returns the first result, not a new entry.
package commands
