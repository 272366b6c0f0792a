// Package bootstrap is the leader-only processor that makes a new leader's
// cluster whole: it records its own and its peers' addresses in the log and
// creates the default namespace if the log has none.
//
// # Usage
//
// Build a Processor with New and add it to the supervisor. Config.Peers
// returns the servers the agent knows (from joins) with their HTTP
// addresses.
//
// # Concurrency
//
// Run is called by the supervisor, one generation at a time.
//
// # Invariants
//
//   - Every change goes through the command pipeline; commands that find
//     nothing to change append nothing, so re-running is harmless.
package bootstrap
