package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
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
	agents, err := startCluster(dir, n)
	for _, a := range agents {
		defer a.Shutdown()
	}
	if err != nil {
		return nil, err
	}
	leader, err := waitLeader(agents)
	if err != nil {
		return nil, err
	}
	label := "1 server"
	if n > 1 {
		label = fmt.Sprintf("%d servers", n)
	}
	rows, err := loadRows(label, []string{leader.HTTPAddr()}, clients, d)
	if err != nil {
		return nil, err
	}
	return append(rows, pipelineRows(label, leader, clients, d)...), nil
}

func startCluster(dir string, n int) ([]*agent.Agent, error) {
	var agents []*agent.Agent
	for i := range n {
		cfg := agent.DefaultConfig()
		cfg.DataDir = fmt.Sprintf("%s/s%d", dir, i)
		cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
		cfg.BootstrapExpect = n
		cfg.RaftTimeout = 500 * time.Millisecond
		cfg.JoinInterval = 100 * time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		cfg.RaftLogOutput = io.Discard
		cfg.NoSync = os.Getenv("ORDO_BENCH_NOSYNC") != ""
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

// waitLeader waits until a leader serves the default namespace.
func waitLeader(agents []*agent.Agent) (*agent.Agent, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, a := range agents {
			if !a.Node().IsLeader() {
				continue
			}
			resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/namespace/default")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return a, nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("no leader within 30s")
}
