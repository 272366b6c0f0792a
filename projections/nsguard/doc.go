// Package nsguard owns the namespace delete guard (N9): what a namespace
// still holds — jobs that are not terminal, variables, and (once they
// exist) CSI volumes — and the precondition that refuses a namespace's
// deletion at apply while it holds any.
//
// # Usage
//
// The namespace delete command calls Remaining to refuse early with a
// message naming what remains, and carries EmptyPrecondition(name) so the
// FSM decides again at apply: a job registered or a variable written
// between the decision and the commit cannot slip through.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Remaining reads only the view, so the decision at apply is
//     deterministic and the same on every server.
//   - A job counts until it is dead (stopped with nothing running) or
//     purged.
package nsguard
