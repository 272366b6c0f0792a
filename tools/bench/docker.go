package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/ordoplane/ordo/client/driver/docker"
	"github.com/ordoplane/ordo/client/driver/docker/dockertest"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
)

// dockerJob is a job of the docker figures: n allocations of a busybox
// sleep on the host's network with an init process, as dockertest's Run
// starts the daemon's baseline containers.
func dockerJob(id, typ, image string, n int) string {
	return fmt.Sprintf(`job %q {
  type        = %q
  datacenters = ["dc1"]
  group "g" {
    count = %d
    task "sleep" {
      driver       = "docker"
      kill_timeout = "1s"
      config {
        image        = %q
        command      = "/bin/sleep"
        args         = ["600"]
        network_mode = "host"
        init         = true
      }
      resources {
        cpu    = 10
        memory = 16
      }
    }
  }
}`, id, typ, n, image)
}

// dockerRows measures the docker driver on a dev agent (one server and a
// client with the docker driver) against a dockerd of the bench's own
// (dockertest, with its local busybox image). One at a time: n batch
// jobs of one allocation each, each registered once the one before runs,
// each after a container created and started straight through the Engine
// API and removed (the daemon's own time, with as many containers
// running as the allocation sees); an allocation's start-to-running is
// the client's time from the allocation received to the task started
// (its task events), and placed-to-running from the allocation's
// creation; the driver's addition is the difference of the medians. Then
// the agent process's CPU per running container over an idle window.
// Then the same at once: n containers through the API together, and a
// job of n allocations.
func dockerRows(n int, idle time.Duration) (rows []row, err error) {
	daemon, err := dockertest.Start()
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := daemon.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	burstBase, err := daemonStarts(daemon, n, n)
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "ordo-bench-docker-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := agent.DevConfig()
	cfg.DataDir = dir
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RaftLogOutput = io.Discard
	cfg.Client = agent.DevClientConfig()
	cfg.Client.Drivers = []string{docker.Name}
	cfg.Client.Docker = agent.DockerConfig{Endpoint: daemon.Endpoint}
	a, err := agent.Start(cfg)
	if err != nil {
		return nil, err
	}
	defer a.Shutdown()
	if _, err := waitLeader([]*agent.Agent{a}); err != nil {
		return nil, err
	}
	c := benchClient(a.HTTPAddr())
	if err := waitUntil(time.Minute, "the client's node ready with a healthy docker driver", func() bool {
		var nodes []struct {
			Status  string
			Drivers map[string]struct{ Healthy bool }
		}
		return c.Get(context.Background(), "/v1/nodes", nil, &nodes) == nil && len(nodes) == 1 &&
			nodes[0].Status == events.NodeStatusReady && nodes[0].Drivers[docker.Name].Healthy
	}); err != nil {
		return nil, err
	}

	var seqReceived, seqPlaced, seqBase []time.Duration
	for i := range n {
		// The daemon's own start beside each allocation's, with as many
		// containers running, so that both see the same daemon.
		b, err := daemonStarts(daemon, 1, 1)
		if err != nil {
			return nil, err
		}
		seqBase = append(seqBase, b...)
		r, p, err := runDockerJob(a, dockerJob(fmt.Sprintf("bench-docker-%03d", i), "batch", daemon.Image, 1), 1)
		if err != nil {
			return nil, err
		}
		seqReceived, seqPlaced = append(seqReceived, r...), append(seqPlaced, p...)
	}

	// The agent's CPU while the containers run idle: the client's
	// goroutines of each (a wait and a log stream, blocked on the daemon)
	// and the server beside it.
	before := cpuTime()
	time.Sleep(idle) // a window of idle time to measure, not a wait for a condition
	used := cpuTime() - before

	burstReceived, burstPlaced, err := runDockerJob(a, dockerJob("bench-docker-burst", "service", daemon.Image, n), n)
	if err != nil {
		return nil, err
	}

	one := fmt.Sprintf("docker: %d allocations one at a time on one client", n)
	all := fmt.Sprintf("docker: %d allocations at once on one client", n)
	return []row{
		{one + ", received to running p50", ms(seqReceived, 50), "ms"},
		{one + ", received to running p99", ms(seqReceived, 99), "ms"},
		{one + ", placed to running p50", ms(seqPlaced, 50), "ms"},
		{one + ", placed to running p99", ms(seqPlaced, 99), "ms"},
		{"docker: the daemon's own create+start one at a time p50", ms(seqBase, 50), "ms"},
		{"docker: the daemon's own create+start one at a time p99", ms(seqBase, 99), "ms"},
		{"docker: the driver and client's addition to the daemon's start p50", ms(seqReceived, 50) - ms(seqBase, 50), "ms"},
		{fmt.Sprintf("docker: agent CPU per running container at idle (%d running)", n), float64(used.Microseconds()) / idle.Seconds() / float64(n), "µs/s"},
		{all + ", received to running p50", ms(burstReceived, 50), "ms"},
		{all + ", received to running p99", ms(burstReceived, 99), "ms"},
		{all + ", placed to running p99", ms(burstPlaced, 99), "ms"},
		{fmt.Sprintf("docker: the daemon's own create+start, %d at once, p50", n), ms(burstBase, 50), "ms"},
		{fmt.Sprintf("docker: the daemon's own create+start, %d at once, p99", n), ms(burstBase, 99), "ms"},
	}, nil
}

// daemonStarts creates and starts n containers straight through the
// Engine API, at most par at a time, returns how long each took and
// removes them.
func daemonStarts(d *dockertest.Daemon, n, par int) ([]time.Duration, error) {
	took := make([]time.Duration, n)
	ids := make([]string, n)
	err := parallel(par, n, func(i int) error {
		var err error
		ids[i], took[i], err = d.Run(d.Image, "/bin/sleep", "600")
		return err
	})
	for _, id := range ids {
		if id != "" {
			if rerr := d.Remove(id); rerr != nil && err == nil {
				err = rerr
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the daemon's own starts: %w", err)
	}
	return took, nil
}

// runDockerJob registers the job src on a and waits for its n
// allocations to run; it returns, per allocation, the time from the
// client receiving it to its task started, and from its creation (when
// the plan placed it) to the task started.
func runDockerJob(a *agent.Agent, src string, n int) (received, placed []time.Duration, err error) {
	j, err := jobspec.ParseHCL("docker.hcl", []byte(src))
	if err != nil {
		return nil, nil, err
	}
	if _, err := a.Pipeline().Run(context.Background(), "job.register", commands.Request{Actor: "bench"}, &job.Register{Job: *j}); err != nil {
		return nil, nil, fmt.Errorf("register %s: %w", j.ID, err)
	}
	var running []*allocs.Alloc
	if err := waitUntil(5*time.Minute, fmt.Sprintf("%d allocations of %s running", n, j.ID), func() bool {
		list, err := allocs.ByJob(projections.NewView(a.Store()), j.Namespace, j.ID)
		if err != nil {
			return false
		}
		running = running[:0]
		for _, al := range list {
			if ts := al.TaskStates["sleep"]; ts != nil && ts.State == events.TaskStateRunning {
				running = append(running, al)
			}
		}
		return len(running) == n
	}); err != nil {
		return nil, nil, err
	}
	for _, al := range running {
		var got, started int64
		for _, e := range al.TaskStates["sleep"].Events {
			switch e.Type {
			case events.TaskEventReceived:
				got = e.Time
			case events.TaskEventStarted:
				started = e.Time
			}
		}
		if got == 0 || started == 0 {
			return nil, nil, fmt.Errorf("allocation %s lacks its Received or Started event", al.ID)
		}
		received = append(received, time.Duration(started-got))
		placed = append(placed, time.Duration(started-al.CreateTime))
	}
	return received, placed, nil
}

// ms is the q-th percentile of ds in milliseconds (ds is sorted).
func ms(ds []time.Duration, q int) float64 {
	slices.Sort(ds)
	return float64(ds[(len(ds)-1)*q/100].Microseconds()) / 1000
}

// waitUntil polls cond every 50 ms until it holds or limit passes.
func waitUntil(limit time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not %s after %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
