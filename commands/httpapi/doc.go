// Package httpapi serves ordo's HTTP API on port 4646, shaped like Nomad's
// (paths, field names, blocking queries with index and wait, the X-Nomad-*
// headers) so the nomad/api Go client and people's habits work.
//
// # Usage
//
// Build a Server from a Config holding the raft node, the FSM, the command
// pipeline and the agent's membership hook, and serve it with net/http,
// through a server and listener httplimit builds (timeouts, connections
// per address); Config.Limits tells the Server those bounds, which it
// extends for blocking queries, streams and uploads (deadlines.go).
// Writes on a follower are forwarded to the leader. A default read is
// answered linearizably where it arrives: the leader confirms it still
// leads (forward.go); a follower first applies the leader's read index
// (followerread.go), and forwards the few reads needing what only the
// leader holds (leaderOnly). Reads with ?stale are answered locally at
// once.
//
// A Config with ReadOnly set and no raft node serves a store nothing is
// ever appended to (ordo replay serves a history file's): the server
// leads itself alone, answers every read locally and refuses every
// request that would change state with 409 (readonly.go).
//
// # Concurrency
//
// A Server is safe for concurrent use by net/http.
//
// # Invariants
//
//   - Every error is a JSON body {Error, Field?, Status} with the status
//     commands.Status gives it.
//   - Bad input is refused before the pipeline proposes anything; a
//     path, namespace parameter or command identity no route accepts is
//     refused before routing (params.go).
//   - Payloads leave through events.Redacted only.
package httpapi
