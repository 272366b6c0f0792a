package testagent

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
)

// DevConfig returns agent.DevConfig for a one-server test agent: data in
// dataDir, port-0 loopback addresses, a 100 ms raft timeout, no fsync of
// the raft log and no log output. Nodes keep the default heartbeat TTLs;
// QuietNodes lengthens them.
func DevConfig(dataDir string) agent.Config {
	cfg := agent.DevConfig()
	cfg.DataDir = dataDir
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Logger = Discard()
	cfg.RaftLogOutput = io.Discard
	return cfg
}

// QuietNodes sets cfg's heartbeat TTL and grace to an hour, so that no
// node goes down unless the test says so.
func QuietNodes(cfg *agent.Config) {
	cfg.HeartbeatMinTTL, cfg.HeartbeatGrace = time.Hour, time.Hour
}

// StartDev starts an agent with cfg, shuts it down when the test ends, and
// waits until the leader has created the default namespace. It returns the
// agent and a nomad/api client pointed at it.
func StartDev(t testing.TB, cfg agent.Config) (*agent.Agent, *api.Client) {
	t.Helper()
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	WaitFor(t, ServerTimeout, "the default namespace", func() bool {
		_, _, err := c.Namespaces().Info("default", nil)
		return err == nil
	})
	return a, c
}

// StartDevClient starts a dev agent that runs a client with the exec
// driver, as `ordo agent -dev` does, and waits for its one node to be
// ready. edit, when given, changes the configuration first (after the
// client's is set, so it may change that too). It returns the agent, a
// nomad/api client pointed at it and the node's id.
func StartDevClient(t testing.TB, edit ...func(*agent.Config)) (*agent.Agent, *api.Client, string) {
	t.Helper()
	cfg := DevConfig(t.TempDir())
	cfg.Client = agent.DevClientConfig()
	for _, f := range edit {
		f(&cfg)
	}
	a, c := StartDev(t, cfg)
	var nodeID string
	WaitFor(t, ServerTimeout, "the dev node ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" {
			return false
		}
		nodeID = nodes[0].ID
		return true
	})
	return a, c, nodeID
}
