// Package client holds the end-to-end tests of one server with real
// clients: a dev agent (in process, Pebble on disk, raft over TCP, the
// HTTP API on 127.0.0.1) whose clients run real workloads with the exec
// and docker drivers, CSI plugins and instances launched as processes,
// or are cut off from the server. The server-only tests are in test/e2e,
// the multi-server tests in test/cluster.
//
// They share one package, so that one test binary, not one per concept,
// links the whole agent. Each concept has its files, named for it:
//
//   - capacity_test.go: capacity on demand, instances launched as real
//     `ordo agent -client` processes (docs/capacity.md).
//   - csi_test.go: CSI volumes with tools/csi-hostpath as a plugin job.
//   - disconnect_*_test.go: the client half of BEHAVIOURS.md N1, a
//     client cut off at its HTTP transport and reconnected.
//   - dockerjob*_test.go: docker jobs on a dockerd of the package's own,
//     which main_test.go starts for the first test that needs it.
//   - examples*_test.go: docs/examples' jobspecs reach their state.
//   - workload_test.go: a Nomad service on the dev client, its check and
//     the templates that read it; this binary, run as the task
//     (serveEnv, main_test.go), is the service.
//
// # Usage
//
//	go test -race ./test/client/
//	go test -race -run '^TestDockerJob$' ./test/client/
//
// # Concurrency
//
// Each test starts its own agent and clients in its own temp directories
// on port 0; the tests share the binary and the dockerd. Every top-level
// test is parallel (TestMain runs at least four at once): none sets the
// environment or other process state, and docker containers are found by
// their allocation's id.
//
// # Invariants
//
//   - No sleep synchronises anything: tests wait on a condition with a
//     deadline, a failure guard and not a pace.
//   - A part a test needs that is missing (dockerd, busybox) fails the
//     test; nothing is skipped.
package client
