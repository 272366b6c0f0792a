package main

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// ordo history takes the launcher's kinds: a node request filed by
// capacity on demand shows its CapacityRequested link, and the blocked
// eval's history leads to the request.
func TestHistoryNodeRequest(t *testing.T) {
	addr := startSeededAgent(t,
		&events.NodeRequestCreated{Request: events.NodeRequest{ID: "req-1", Labels: []string{"small"}, Requestor: "capacity:batch"}},
		&events.CapacityRequested{RequestID: "req-1", Pool: "batch", Label: "small", Evals: []string{"eval-9"}, Placements: 2},
	)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"node_request", "req-1"}, []string{"NodeRequestCreated", "CapacityRequested", "filed by capacity on demand for pool batch", "eval-9"}},
		{[]string{"node-request", "req-1"}, []string{"CapacityRequested"}},
		{[]string{"eval", "eval-9"}, []string{"CapacityRequested", "node request req-1 filed for pool batch"}},
	} {
		code, stdout, stderr := runCLI(append([]string{"history", "-address", addr}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, stdout)
			}
		}
	}
}
