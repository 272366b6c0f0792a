// Package testagent helps end-to-end tests start real ordo servers and check
// what they stored: it builds quiet server configs, waits on conditions with a
// deadline, talks to the HTTP API the way a client does, and compares a
// store's projections with a rebuild from its archive.
//
// # Usage
//
// Start servers with agent.Start(testagent.ServerConfig(t.TempDir())), drive
// them through a Client, wait with WaitFor, and assert with Upserts and
// CheckProjections on each server's store (or on a store opened after the
// server stopped).
//
// A test of one dev agent starts it with StartDev(t, DevConfig(t.TempDir())),
// calls its API with Call and PutOK, adds nodes with ReadyNode and jobs
// with Register(SleepJob(...)), runs a client under Run, and walks the
// nodes' statuses through its archive with WalkNodes.
//
// # Concurrency
//
// Client and Acks are safe for concurrent use. WaitFor and the Check helpers
// call t.Fatal and belong on the test goroutine.
//
// # Invariants
//
//   - Nothing here sleeps to wait for a state: WaitFor polls a condition
//     until a deadline and fails the test with what it was waiting for.
//   - Store checks read one kv snapshot, so a server that is still applying
//     is checked at one whole index.
package testagent

import (
	"flag"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/storage/raftlog"
	"github.com/ordoplane/ordo/storage/waittest"
)

// longFlag is registered here so that every test binary importing this
// package accepts -long: go test ./test/... -long.
var longFlag = flag.Bool("long", false, "run the long variants of the end-to-end tests (or set ORDO_LONG_TESTS=1)")

// Long reports whether the long variants of the tests should run: the
// -long flag or ORDO_LONG_TESTS=1.
func Long() bool {
	return *longFlag || os.Getenv("ORDO_LONG_TESTS") == "1"
}

// Discard returns a logger that writes nothing.
func Discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// ServerConfig returns the config of a server in a test cluster: data in
// dataDir, port-0 addresses on 127.0.0.1, short raft, join and autopilot
// timings, the cluster secret ClusterSecret, no fsync of the raft log and
// no log output.
func ServerConfig(dataDir string) agent.Config {
	cfg := agent.DefaultConfig()
	cfg.DataDir = dataDir
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.RaftTimeout = 200 * time.Millisecond
	cfg.JoinInterval = 100 * time.Millisecond
	cfg.ClusterSecret = ClusterSecret
	cfg.Autopilot = raftlog.AutopilotConfig{LastContactThreshold: time.Second, ServerStabilizationTime: time.Second,
		UpdateInterval: 100 * time.Millisecond, ReconcileInterval: 100 * time.Millisecond}
	cfg.NoSync = true
	cfg.Logger = Discard()
	cfg.RaftLogOutput = io.Discard
	return cfg
}

// ClusterSecret is the cluster secret of ServerConfig's servers.
const ClusterSecret = "test-cluster-secret-0123456789"

// WaitFor checks cond until it holds, failing t when timeout passes first.
// what names the condition in the failure. It is waittest.For, for the
// tests that already import testagent.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	waittest.For(t, timeout, what, cond)
}

// Poll checks cond until it holds or timeout passes and reports whether it
// held (waittest.Poll). Safe to call from any goroutine.
func Poll(timeout time.Duration, cond func() bool) bool { return waittest.Poll(timeout, cond) }
