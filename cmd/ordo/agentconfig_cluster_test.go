package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// TestClusterSecretSources: the file sets the cluster secret,
// $ORDO_CLUSTER_SECRET overrides it and -cluster-secret overrides both;
// the autopilot block sets autopilot.
func TestClusterSecretSources(t *testing.T) {
	src := "data_dir = \"/d\"\nserver {\n bootstrap_expect = 3\n cluster_secret = \"from-the-file-0123456789\"\n}\n" +
		"autopilot {\n cleanup_dead_servers = true\n last_contact_threshold = \"1s\"\n max_trailing_logs = 500\n" +
		" min_quorum = 3\n server_stabilization_time = \"30s\"\n dead_server_last_contact_threshold = \"1h\"\n}\n"
	f, err := parseAgentFile("agent.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, env, flag, want string
	}{
		{"file", "", "", "from-the-file-0123456789"},
		{"env over file", "from-the-env-0123456789", "", "from-the-env-0123456789"},
		{"flag over env", "from-the-env-0123456789", "from-the-flag-0123456789", "from-the-flag-0123456789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(clusterSecretEnv, tc.env)
			changed := func(flag string) bool { return flag == "cluster-secret" && tc.flag != "" }
			s, err := mergeAgentConfig(agentFlags{clusterSecret: tc.flag}, changed, f)
			if err != nil {
				t.Fatal(err)
			}
			if s.Config.ClusterSecret != tc.want {
				t.Fatalf("cluster secret = %q, want %q", s.Config.ClusterSecret, tc.want)
			}
			want := raftlog.AutopilotConfig{CleanupDeadServers: true, LastContactThreshold: time.Second, MaxTrailingLogs: 500,
				MinQuorum: 3, ServerStabilizationTime: 30 * time.Second, DeadServerLastContactThreshold: time.Hour}
			if s.Config.Autopilot != want {
				t.Fatalf("autopilot = %+v, want %+v", s.Config.Autopilot, want)
			}
			if err := s.Config.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestClusterConfigErrors: a multi-server agent without a secret, a short
// secret and bad autopilot settings are refused with a message naming
// what to set.
func TestClusterConfigErrors(t *testing.T) {
	t.Setenv(clusterSecretEnv, "")
	for _, tc := range []struct{ name, src, want string }{
		{"no secret with bootstrap_expect", "data_dir = \"/d\"\nserver {\n bootstrap_expect = 3\n}\n", "needs a cluster secret"},
		{"no secret with join", "data_dir = \"/d\"\nserver {\n join = [\"a:1\"]\n}\n", "server { cluster_secret"},
		{"short secret", "data_dir = \"/d\"\nserver {\n cluster_secret = \"short\"\n}\n", "use at least 16"},
		{"empty secret", "server {\n cluster_secret = \"\"\n}\n", "server.cluster_secret in agent.hcl: empty"},
		{"bad duration", "autopilot {\n server_stabilization_time = \"soon\"\n}\n", `autopilot.server_stabilization_time in agent.hcl: "soon"`},
		{"bad trailing logs", "autopilot {\n max_trailing_logs = 0\n}\n", "autopilot.max_trailing_logs in agent.hcl: 0 must be positive"},
		{"unknown autopilot attribute", "autopilot {\n enable_redundancy_zones = true\n}\n", "not expected here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseAgentFile("agent.hcl", []byte(tc.src))
			if err == nil {
				var s agentSettings
				if s, err = mergeAgentConfig(agentFlags{}, func(string) bool { return false }, f); err == nil {
					err = s.Config.Validate()
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// A lone server and -dev need none.
	for _, c := range []agent.Config{agent.DevConfig(), func() agent.Config {
		c := agent.DefaultConfig()
		c.DataDir, c.BootstrapExpect = "/d", 1
		return c
	}()} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c.BootstrapExpect, err)
		}
	}
}

// TestOperatorRaftCommands: the CLI's transfer-leadership and remove-peer
// present the cluster secret from $ORDO_CLUSTER_SECRET (a lone server
// refuses both with 409), are refused 403 without it, and autopilot
// health shows the server; the secret is never in /v1/agent/self.
func TestOperatorRaftCommands(t *testing.T) {
	const secret = "cli-test-cluster-secret-0123"
	addr := startDevAgent(t, func(c *agent.Config) { c.ClusterSecret = secret })
	t.Setenv(clusterSecretEnv, "")
	code, _, stderr := runCLI("operator", "raft", "transfer-leadership", "-address", addr)
	if code != 1 || !strings.Contains(stderr, "cluster secret") {
		t.Fatalf("transfer-leadership without the secret: %d %q", code, stderr)
	}
	t.Setenv(clusterSecretEnv, secret)
	code, _, stderr = runCLI("operator", "raft", "transfer-leadership", "-address", addr)
	if code != 1 || !strings.Contains(stderr, "no other voter") {
		t.Fatalf("transfer-leadership alone: %d %q", code, stderr)
	}
	code, _, stderr = runCLI("operator", "raft", "remove-peer", "-address", addr, "-peer-id", "nope")
	if code != 1 || !strings.Contains(stderr, "not found") {
		t.Fatalf("remove-peer of an unknown id: %d %q", code, stderr)
	}
	code, stdout, stderr := runCLI("operator", "autopilot", "health", "-address", addr)
	if code != 0 || !strings.Contains(stdout, "Failure tolerance: 0") || !strings.Contains(stdout, "leader") {
		t.Fatalf("autopilot health: %d %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("operator", "autopilot", "get-config", "-address", addr)
	if code != 0 || !strings.Contains(stdout, "ServerStabilizationTime") || !strings.Contains(stdout, "10s") {
		t.Fatalf("autopilot get-config: %d %q %q", code, stdout, stderr)
	}
	resp, err := http.Get(addr + "/v1/agent/self")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), secret) {
		t.Fatal("agent/self shows the cluster secret")
	}
}
