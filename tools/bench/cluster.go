package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// clusterLoad starts n servers on loopback with synced disks in a temp
// dir, loads the leader with clients writers and shuts them down.
func clusterLoad(n, clients int, d time.Duration) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	label := "1 server"
	if n > 1 {
		label = fmt.Sprintf("%d servers", n)
	}
	// Two clusters side by side, one reading linearizably (the default),
	// one unconfirmed (the read path before); their reads alternate in
	// four rounds, so neither gets the quieter moments of the machine.
	var clusters [2][]*agent.Agent
	for i, unconfirmed := range []bool{false, true} {
		agents, err := startCluster(fmt.Sprintf("%s/%v", dir, unconfirmed), n, unconfirmed)
		for _, a := range agents {
			defer a.Shutdown()
		}
		if err != nil {
			return nil, err
		}
		if _, err := waitLeader(agents); err != nil {
			return nil, err
		}
		clusters[i] = agents
	}
	var reads [2]loadResult
	for round := range 4 {
		c := round % 2
		var addrs []string
		for _, a := range clusters[c] {
			addrs = append(addrs, a.HTTPAddr())
		}
		r := readLoad(addrs, clients, d/2)
		reads[c].acked += r.acked
		reads[c].failed += r.failed
		reads[c].elapsed += r.elapsed
		reads[c].latencies = append(reads[c].latencies, r.latencies...)
	}
	var rows []row
	for c, how := range []string{"linearizable", "unconfirmed"} {
		slices.Sort(reads[c].latencies)
		r, err := readRows(label, how, clients, reads[c])
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	leader, err := waitLeader(clusters[0])
	if err != nil {
		return rows, err
	}
	writes, err := loadRows(label, []string{leader.HTTPAddr()}, clients, d, true)
	if err != nil {
		return rows, err
	}
	rows = append(append(writes, pipelineRows(label, leader, clients, d)...), rows...)
	if n > 1 {
		return rows, nil
	}
	ceiling, err := httpCeilingRows(clients, d)
	return append(rows, ceiling...), err
}

// startCluster starts n servers in dir; unconfirmed turns leadership
// confirmation off for reads (Config.UnconfirmedReads).
func startCluster(dir string, n int, unconfirmed bool) ([]*agent.Agent, error) {
	var agents []*agent.Agent
	for i := range n {
		cfg := agent.DefaultConfig()
		cfg.DataDir = fmt.Sprintf("%s/s%d", dir, i)
		cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
		cfg.HTTP.MaxConnsPerClient = -1 // load generators and simulated fleets all connect from 127.0.0.1
		cfg.BootstrapExpect = n
		cfg.RaftTimeout = 500 * time.Millisecond
		cfg.JoinInterval = 100 * time.Millisecond
		cfg.ClusterSecret = "bench-cluster-secret-0123456789"
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		cfg.RaftLogOutput = io.Discard
		cfg.NoSync = os.Getenv("ORDO_BENCH_NOSYNC") != ""
		cfg.UnconfirmedReads = unconfirmed
		if i > 0 {
			cfg.Join = []string{agents[0].HTTPAddr()}
		}
		a, err := agent.Start(cfg)
		if err != nil {
			return agents, err
		}
		agents = append(agents, a)
	}
	return agents, nil
}

// startServer starts one server in a new temp dir named for what, and
// waits until it leads; stop shuts it down and removes the dir.
func startServer(what string) (a *agent.Agent, stop func(), err error) {
	dir, err := os.MkdirTemp("", "ordo-bench-"+what+"-")
	if err != nil {
		return nil, nil, err
	}
	agents, err := startCluster(dir, 1, false)
	stop = func() {
		for _, a := range agents {
			a.Shutdown()
		}
		os.RemoveAll(dir)
	}
	if err == nil {
		a, err = waitLeader(agents)
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	return a, stop, nil
}

// waitLeader waits until a leader serves the default namespace.
func waitLeader(agents []*agent.Agent) (*agent.Agent, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, a := range agents {
			if !a.Node().IsLeader() {
				continue
			}
			if benchClient(a.HTTPAddr()).Get(context.Background(), "/v1/namespace/default", nil, nil) == nil {
				return a, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("no leader within 30s")
}

// paced runs writers goroutines until ctx ends, each calling write(c, n)
// once every interval (c the writer, n its count), their starts spread
// over one interval: together, writers/interval calls a second.
func paced(ctx context.Context, writers int, interval time.Duration, write func(c, n int)) {
	var wg sync.WaitGroup
	start := time.Now()
	for c := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := start.Add(time.Duration(c) * interval / time.Duration(writers))
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(next)):
				}
				next = next.Add(interval)
				write(c, n)
			}
		}()
	}
	wg.Wait()
}
