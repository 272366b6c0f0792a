package agent

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/testlog"
)

// TestValidateCluster: a server that forms or joins a cluster needs a
// cluster secret of at least MinClusterSecretLen characters; -dev and a
// lone server do not.
func TestValidateCluster(t *testing.T) {
	long := strings.Repeat("s", MinClusterSecretLen)
	for _, tc := range []struct {
		name string
		cfg  func(c *Config)
		ok   bool
	}{
		{"lone server", func(c *Config) { c.BootstrapExpect = 1 }, true},
		{"no bootstrap, no join", func(c *Config) {}, true},
		{"dev", func(c *Config) { *c = DevConfig() }, true},
		{"three without a secret", func(c *Config) { c.BootstrapExpect = 3 }, false},
		{"join without a secret", func(c *Config) { c.Join = []string{"a:1"} }, false},
		{"three with a secret", func(c *Config) { c.BootstrapExpect, c.ClusterSecret = 3, long }, true},
		{"short secret", func(c *Config) { c.ClusterSecret = long[1:] }, false},
		{"client only", func(c *Config) { c.Server, c.Join = false, []string{"a:1"} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.DataDir = "/d"
			tc.cfg(&c)
			if err := c.validateCluster(); (err == nil) != tc.ok {
				t.Fatalf("validateCluster = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestJoinWithWrongSecret: a server with another secret is refused: it
// says so in its log, never becomes a member, and the cluster's
// configuration stays as it was.
func TestJoinWithWrongSecret(t *testing.T) {
	start := func(secret string, bootstrap int, join []string, logs io.Writer) *Agent {
		cfg := DefaultConfig()
		cfg.DataDir, cfg.HTTPAddr, cfg.RaftAddr = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
		cfg.RaftTimeout, cfg.JoinInterval, cfg.NoSync = 100*time.Millisecond, 50*time.Millisecond, true
		cfg.BootstrapExpect, cfg.Join, cfg.ClusterSecret = bootstrap, join, secret
		cfg.Logger, cfg.RaftLogOutput = slog.New(slog.NewTextHandler(logs, nil)), io.Discard
		a, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Shutdown() })
		return a
	}
	s1 := start("the-right-cluster-secret", 1, nil, io.Discard)
	logs := &testlog.Buffer{}
	s2 := start("a-wrong-cluster-secret!!", 0, []string{s1.HTTPAddr()}, logs)
	// Polling a log a goroutine writes: there is no state to wait on.
	if !waittest.Poll(20*time.Second, func() bool {
		return strings.Contains(logs.String(), "join refused") && strings.Contains(logs.String(), "cluster secret")
	}) {
		t.Fatalf("s2 never logged its refused join:\n%s", logs.String())
	}
	list, err := s1.Node().Servers()
	if err != nil || len(list) != 1 || list[0].ID != s1.ID() {
		t.Fatalf("s1's configuration = %v, %v; want s1 alone", list, err)
	}
	if s2.member() {
		t.Fatal("s2 became a member with a wrong secret")
	}
}

// TestValidateRaftTimeout: a raft timeout below 10ms is refused (raft's
// own floor is 5ms, and the leader lease is half of it).
func TestValidateRaftTimeout(t *testing.T) {
	for _, tc := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {10 * time.Millisecond, true}, {500 * time.Millisecond, true}, {9 * time.Millisecond, false}} {
		c := DefaultConfig()
		c.DataDir, c.RaftTimeout = "/d", tc.d
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate with RaftTimeout %v = %v, want ok=%v", tc.d, err, tc.ok)
		}
	}
}
