package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/test/testagent"
)

const failoverJob = `job "web" {
  datacenters = ["dc1"]
  group "web" {
    count = 6
    task "server" {
      driver = "exec"
      config { command = "/bin/sleep" }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`

func leaderAgent(list []*agent.Agent) *agent.Agent {
	for _, a := range list {
		if a != nil && a.Node().IsLeader() {
			return a
		}
	}
	return nil
}

// liveAllocs returns the job's allocations the servers want running, by name.
func liveAllocs(a *agent.Agent) map[string]int {
	snap := a.Store().Snapshot()
	defer snap.Close()
	list, err := allocs.ByJob(projections.NewView(snap), "default", "web")
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, al := range list {
		if !al.Terminal() {
			out[al.Name]++
		}
	}
	return out
}

// A job registered while the leader is killed ends with exactly count
// allocations, one per name, on every server: the register is retried with
// its idempotency key and the new leader's broker restores the pending eval.
func TestJobRegisteredDuringFailover(t *testing.T) {
	dir := t.TempDir()
	var servers []*agent.Agent
	for i := range 3 {
		cfg := testagent.ServerConfig(filepath.Join(dir, fmt.Sprint(i)))
		cfg.BootstrapExpect = 3
		cfg.HeartbeatMinTTL = time.Hour // simulated nodes never heartbeat
		cfg.FailoverHeartbeatTTL = time.Hour
		if i > 0 {
			cfg.Join = []string{servers[0].HTTPAddr()}
		}
		a, err := agent.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, a)
	}
	t.Cleanup(func() {
		for _, a := range servers {
			if a != nil {
				a.Shutdown()
			}
		}
	})
	testagent.WaitFor(t, 30*time.Second, "a leader", func() bool { return leaderAgent(servers) != nil })
	ctx := context.Background()
	req := commands.Request{Actor: "test"}
	run := func(name string, cmd commands.Command, key string) error {
		r := req
		r.CommandID = key
		var err error
		ok := testagent.Poll(30*time.Second, func() bool {
			l := leaderAgent(servers)
			if l == nil {
				return false
			}
			_, err = l.Pipeline().Run(ctx, name, r, cmd)
			return err == nil || commands.Status(err) < 500
		})
		if !ok && err == nil {
			err = errors.New("no leader took the command")
		}
		return err
	}
	for i := range 4 {
		id := fmt.Sprintf("node-%d", i)
		n := events.Node{ID: id, Name: id, Datacenter: "dc1", Resources: events.NodeResources{CPU: 4000, MemoryMB: 8192},
			Drivers: map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}}
		if err := run("node.register", node.Register{Node: n}, "reg-"+id); err != nil {
			t.Fatal(err)
		}
		if err := run("node.status", node.UpdateStatus{ID: id, Status: events.NodeStatusReady}, "ready-"+id); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := jobspec.ParseHCL("web.hcl", []byte(failoverJob))
	if err != nil {
		t.Fatal(err)
	}

	// Register on the leader and kill it at once: the eval may or may not
	// have been scheduled; the retry (same key) must not duplicate anything.
	var old *agent.Agent
	testagent.WaitFor(t, 30*time.Second, "a leader", func() bool { old = leaderAgent(servers); return old != nil })
	done := make(chan error, 1)
	go func() {
		_, err := old.Pipeline().Run(ctx, "job.register", commands.Request{Actor: "test", CommandID: "register-web"}, &job.Register{Job: *spec})
		done <- err
	}()
	for i, a := range servers {
		if a == old {
			a.Shutdown()
			servers[i] = nil
		}
	}
	<-done
	// The retry is the same request (same command, same key), so it gets
	// the first outcome if that committed, or applies now.
	if err := run("job.register", &job.Register{Job: *spec}, "register-web"); err != nil {
		t.Fatal(err)
	}
	for _, a := range servers {
		if a == nil {
			continue
		}
		testagent.WaitFor(t, 30*time.Second, "exactly 6 allocations on "+a.ID(), func() bool {
			live := liveAllocs(a)
			if len(live) != 6 {
				return false
			}
			for _, n := range live {
				if n != 1 {
					return false
				}
			}
			return true
		})
	}
	// And it stays that way: no late duplicate placements once settled.
	// (Leadership may move again on a loaded machine: wait for a leader.)
	var l *agent.Agent
	testagent.WaitFor(t, 30*time.Second, "a leader", func() bool { l = leaderAgent(servers); return l != nil })
	var last uint64
	testagent.WaitFor(t, 10*time.Second, "the log to settle", func() bool {
		a := l.FSM().Applied()
		settled := a == last
		last = a
		return settled
	})
	if live := liveAllocs(l); len(live) != 6 {
		t.Fatalf("after settling: %v", live)
	}
}
