// Package disconnect holds the client half of BEHAVIOURS.md N1 end to end:
// real client agents (client.Client, mock driver) run against an
// in-process dev server with short heartbeat TTLs, and one of them is cut
// off from the servers at its HTTP transport.
//
// The cut client misses its heartbeat, its node becomes disconnected, its
// allocations unknown, and replacements are placed on the other clients
// (or, past lost_after, its allocations are lost). While cut off its tasks
// keep running. It is then reconnected with its register, heartbeat and
// alloc-update calls let through in a chosen order, and the tests check
// that exactly count allocations run afterwards, that the originals kept
// running (or were stopped by their client once lost), that each
// replacement was stopped and reported complete, and, walking the
// archive, that nothing was ever placed on a node that was not ready.
//
// # Usage
//
//	go test -race ./test/disconnect/
//
// The package has no production code: everything is in its tests.
//
// # Concurrency
//
// Each test starts its own server and clients and runs them alone; the
// cut transport (gate_test.go) is safe for the clients' concurrent calls.
//
// # Invariants
//
//   - No sleep synchronises anything: tests wait on a condition with a
//     deadline (a failure guard), and the cut client's mock tasks follow a
//     manual clock the test advances.
//   - The client and server code run unchanged: a client is cut off only
//     through the http.Client its Config takes.
package disconnect
