// Package supervisor starts leader-only processors when this server gains
// raft leadership and stops them, waiting for each to return, when it loses
// it.
//
// # Usage
//
// Build a Supervisor with the processors and call Run with the channel of
// leadership changes (raftlog.Node.LeaderChanges). Run returns when its
// context ends, after stopping the processors.
//
// # Concurrency
//
// Run is called once. Each processor's Run gets its own context, cancelled
// on leadership loss; the supervisor joins them before starting again.
//
// # Invariants
//
//   - At most one generation of processors runs at a time.
//   - A processor that returns an error is logged and restarted after a
//     backoff while leadership lasts; a cancelled context is a clean stop.
package supervisor
