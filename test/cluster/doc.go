// Package cluster holds end-to-end tests of a three-server cluster: real
// agents with Pebble on disk, raft over TCP and the HTTP API on 127.0.0.1,
// driven through the API while the leader fails and comes back. The
// one-server tests are in test/e2e and test/client.
//
// They share one package, so that one test binary, not one per concept,
// links the whole agent. Each concept has its files, named for it:
//
//   - cluster_test.go, followerread_test.go, jobfailover_test.go,
//     httplimits_test.go: writes, reads and jobs across leader failover.
//   - membership_test.go, monitor_test.go, downgrade_test.go: servers
//     joining, leaving and older servers meeting newer snapshots.
//   - keyring_test.go: the root keyring replicated to every server and
//     to one that joins later, and removed everywhere (N5, N14).
//   - mirror*_test.go: the Kafka mirror (kfake) under broker faults and
//     leader failover; secrets never mirrored in clear.
//   - snapshot_*_test.go: a server far behind catches up through a raft
//     snapshot; an operator's restore across the cluster wakes blocking
//     queries.
//   - linearizability_test.go: TestLinearizable, three server processes
//     under leader faults checked with porcupine (harness in
//     test/linearizability/chaos); `make chaos` is its long run.
//
// # Usage
//
//	go test -race ./test/cluster/
//	go test -run '^TestLinearizable$' -v ./test/cluster/
//
// # Concurrency
//
// Each test starts its own servers in its own temp directories on port 0
// and stops them when it ends.
//
// # Invariants
//
//   - No sleep synchronises anything: tests wait on a condition with a
//     deadline, a failure guard and not a pace.
package cluster
