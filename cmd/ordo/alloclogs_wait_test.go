package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/test/testagent"
	"github.com/ordoplane/ordo/test/testlog"
)

// TestAllocLogsWaitsForAPendingAllocation: `alloc logs` right after `job
// run` finds the allocation placed but not started; it waits for it
// (saying so on stderr) instead of failing, and stops waiting once the
// allocation will not start any more (here: stopped).
func TestAllocLogsWaitsForAPendingAllocation(t *testing.T) {
	const timeout = 20 * time.Second
	cfg := testagent.DevConfig(t.TempDir())
	testagent.QuietNodes(&cfg)
	a, nc := testagent.StartDev(t, cfg)
	addr := "http://" + a.HTTPAddr()
	testagent.ReadyNode(t, a.HTTPAddr(), "n1", 4000, 8192) // a node no client runs: its allocations stay pending
	testagent.Register(t, nc, testagent.SleepJob("service", "web", 1, 100))
	var id string
	testagent.WaitFor(t, timeout, "web's allocation placed", func() bool {
		list, _, err := nc.Jobs().Allocations("web", false, nil)
		if err == nil && len(list) == 1 && list[0].ClientStatus == "pending" {
			id = list[0].ID
		}
		return id != ""
	})

	var stdout, stderr testlog.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"alloc", "logs", "-address", addr, id[:8]}, &stdout, &stderr) }()
	testagent.WaitFor(t, timeout, "alloc logs waiting", func() bool {
		return strings.Contains(stderr.String(), "waiting for allocation "+id+" to start")
	})
	select {
	case code := <-done:
		t.Fatalf("alloc logs returned %d while the allocation is pending: %q %q", code, stdout.String(), stderr.String())
	default:
	}
	if _, err := nc.Allocations().Stop(&api.Allocation{ID: id}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done: // the node has no client to read logs from: an error, but no more waiting
	case <-time.After(timeout):
		t.Fatalf("alloc logs still waiting after the allocation was stopped: %q", stderr.String())
	}
}
