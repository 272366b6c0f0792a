// Package client is ordo's client agent, what Nomad's client is: it runs
// on a machine, registers it as a node with the servers, heartbeats,
// watches the node's allocations and runs them through task drivers,
// reporting what becomes of them. docs/client.md tells the whole story.
//
// # Usage
//
//	c, err := client.New(client.Config{DataDir: dir, Servers: []string{"127.0.0.1:4646"},
//		Drivers: []driver.Driver{execDriver, mockDriver}})
//	err = c.Run(ctx) // until ctx ends
//
// Run fingerprints the node (client/fingerprint), restores the
// allocations stored under DataDir (client/state) and re-attaches to
// their tasks (client/allocrunner), then runs three loops against the
// servers (client/serverapi):
//
//   - heartbeat: register, then heartbeat "ready" within the TTL the
//     servers answer (at a random point of its last quarter); a 404
//     registers again; failures back off exponentially with jitter.
//   - watch: the blocking query /v1/client/:id/allocations; new
//     allocations get a runner (with their job version), changed ones are
//     passed to theirs (a stop kills the tasks), and allocations the
//     servers no longer list are killed and removed (orphans.go). Only an
//     answer at or past the newest index the client acted on (kept in
//     the state directory) is acted on: a failed call or an older state
//     (a server behind) destroys nothing, and a second older answer in a
//     row is believed (decideWatch, a pure function).
//   - updates: changes are coalesced for UpdateInterval and sent to
//     /v1/client/:id/allocs; failures are retried with backoff; an
//     allocation leaves the queue only when the state the servers
//     acknowledged is its latest. An update for an allocation the servers
//     do not have is dropped.
//   - services (client/services): the running allocations' service
//     instances are registered, with their checks' statuses, and
//     deregistered when their tasks stop; changes are batched and
//     retried with the same backoff.
//
// When the servers cannot be reached the allocations keep running and
// the loops keep retrying; once a call succeeds again the client sends
// every allocation's state (an empty update when it has none) and
// heartbeats at once, which is what a reconnecting node needs to become
// ready again (N1). Terminal allocations are collected beyond
// GCMaxAllocs.
//
// # Concurrency
//
// Run may be called once. Its goroutines — three loops and one per
// allocation runner — are joined before it returns. Lock order:
// Client.mu before an alloc runner's lock; runners call OnChange with no
// lock held.
//
// # Invariants
//
//   - A task is never started twice for one attempt (allocrunner), and a
//     client that stops leaves its tasks running unless DestroyOnShutdown.
//   - The latest state of every allocation reaches the servers once they
//     are reachable, unless they no longer have the allocation.
//   - An allocation is destroyed for being absent only from an answer at
//     or past every index the client acted on before, or from the second
//     older answer in a row.
//   - Time comes from Config.Clock; jitter from a generator seeded by
//     Config.Seed or the node id.
package client
