// This file checks that ordo is linearizable across leader
// failures (DESIGN.md invariant 9): three real servers in child processes
// over TCP, six clients (four in the short run) reading, writing and
// check-and-setting three variables (GET/PUT /v1/var/:path, ?cas=N) and a
// job (PUT /v1/job/:id with EnforceIndex and JobModifyIndex), while the
// leader is SIGKILLed and
// restarted, SIGSTOPped for 4 s (1 s in the short run, and in any case
// until another server leads), cut off from the others by a proxy in
// front of its raft port as long, and asked to hand leadership over (`ordo
// operator raft transfer-leadership`). Each server runs with GOMAXPROCS=1 and a
// goroutine of the test burns a core, which widens the window a stale
// read needs. The history is checked with porcupine against a register
// with a modify index per key (chaos.Model): a read must return the
// latest acknowledged write, a write's answer must name its own index, and
// a cas must succeed exactly when the index it expects is current.
// Operations whose outcome is unknown may or may not have happened.
//
// TestLinearizable is a short run (four faults, one of each kind) in
// `make test`; with -long or ORDO_CHAOS=1 (`make chaos`) it is a long run
// of 24 faults and at least 10,000 operations that prints its figures:
// operations, failovers, unknown outcomes, and the unavailability after
// each kind of fault. The harness lives in the chaos package, shared with
// `make bench`'s chaos figures. On a non-linearizable history the test
// fails naming porcupine's HTML visualization of it.

package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/ordoplane/ordo/processors/launcher/driver/local/localtest"
	"github.com/ordoplane/ordo/test/linearizability/chaos"
	"github.com/ordoplane/ordo/test/testagent"
)

// ordoBinary returns the ordo binary the servers run: $ORDO_BIN, or
// cmd/ordo as localtest builds it, shared with the other test packages of
// the run (a link of its own here cost seconds of CPU every run).
func ordoBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("ORDO_BIN"); bin != "" {
		return bin
	}
	bin, err := localtest.BuildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// long reports whether to run the long variant: -long, ORDO_LONG_TESTS=1
// or ORDO_CHAOS=1.
func long() bool { return testagent.Long() || os.Getenv("ORDO_CHAOS") == "1" }

func TestLinearizable(t *testing.T) {
	bin := ordoBinary(t)
	// Kept when the test fails: the servers' logs are there.
	dir, err := os.MkdirTemp("", "ordo-linearizability-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(dir)
		}
	})
	cfg := chaos.ShortConfig(bin, dir)
	budget, checkTimeout := 3*time.Minute, time.Minute
	if long() {
		cfg = chaos.LongConfig(bin, dir)
		budget, checkTimeout = 30*time.Minute, 10*time.Minute
	}
	cfg.Logf = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	res, err := chaos.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("run: %v (servers' logs in %s)", err, dir)
	}
	t.Logf("figures:\n%s", res.Summary())
	if long() {
		fmt.Print(res.Summary()) // make chaos prints its figures
	}
	for _, u := range res.Unexpected {
		t.Errorf("unexpected answer: %s", u)
	}
	if res.Failovers() == 0 {
		t.Errorf("no fault moved leadership: %+v", res.Faults)
	}
	v, err := res.Check(checkTimeout, os.TempDir())
	if err != nil {
		t.Errorf("check: %v", err)
	}
	switch v.Result {
	case porcupine.Ok:
	case porcupine.Unknown:
		t.Fatalf("porcupine could not decide within %v on %d operations (%d with unknown outcome); visualization %s",
			checkTimeout, len(res.History), res.Unknown, v.HTML)
	default:
		t.Fatalf("history of %d operations (%d with unknown outcome, %d faults) is not linearizable; visualization %s, servers' logs in %s\n%s",
			len(res.History), res.Unknown, len(res.Faults), v.HTML, dir, v.Explanation)
	}
}
