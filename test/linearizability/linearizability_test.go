package linearizability

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

// bin is the ordo binary TestMain built (or $ORDO_BIN).
var bin string

// TestMain finds the binary: $ORDO_BIN, or cmd/ordo as localtest builds
// it, shared with the other test packages of the run (a link of its own
// here cost seconds of CPU every run).
func TestMain(m *testing.M) {
	var err error
	if bin = os.Getenv("ORDO_BIN"); bin == "" {
		bin, err = localtest.BuildBinary()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// long reports whether to run the long variant: -long, ORDO_LONG_TESTS=1
// or ORDO_CHAOS=1.
func long() bool { return testagent.Long() || os.Getenv("ORDO_CHAOS") == "1" }

func TestLinearizable(t *testing.T) {
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
