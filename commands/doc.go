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
// command with Pipeline.Run; map its error to a status with Status. A
// command whose answer shows rows it writes also implements Answered: its
// Outcome.Rows are those rows as its own entry left them.
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
//   - With a Leader configured, a command is decided only on a leader that
//     has applied every earlier term's entries, and an answer taken from
//     the state alone (a refusal, nothing to do) only once a quorum has
//     confirmed that leader still leads.
package commands
