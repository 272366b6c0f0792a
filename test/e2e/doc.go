// Package e2e holds the end-to-end tests of one server: a real agent (a
// dev agent, in process or a child process, with Pebble on disk, raft
// over TCP and the HTTP API on 127.0.0.1) driven through its API, with
// nodes played through the client API. The tests with real clients and
// their workloads are in test/client, the multi-server tests in
// test/cluster, the Nomad API client's in test/compat.
//
// They share one package, so that one test binary, not one per concept,
// links the whole agent. Each concept has its files, named for it:
//
//   - crash_test.go: crash consistency, a dev server in a child process
//     SIGKILLed under write load and restarted on its data directory.
//   - deploywatch_test.go: BEHAVIOURS.md N3, a deployment created
//     initializing and moved to pending by the leader's watcher.
//   - n1_test.go: BEHAVIOURS.md N1's reconnect orderings racing the
//     scheduler.
//   - rebuild_test.go: projection rebuilds, on a version change at start
//     and online under writes.
//   - replay*_test.go: every scheduling decision re-run reproduces its
//     committed plan (history/rerun); partial plans and the eval that
//     gives up.
//   - safety_test.go: time travel and rebuilds append nothing and feed no
//     processor (DESIGN.md invariant 6).
//
// # Usage
//
//	go test -race ./test/e2e/
//	go test -race -run '^TestCrash$' ./test/e2e/
//
// # Concurrency
//
// Each test starts its own agents in its own temp directories on port 0.
//
// # Invariants
//
//   - No sleep synchronises anything: tests wait on a condition with a
//     deadline, a failure guard and not a pace.
package e2e
