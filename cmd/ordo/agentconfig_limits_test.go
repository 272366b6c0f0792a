package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
)

// TestLimitsBlock: the agent file's limits block sets the HTTP API's
// timeouts and connections per client; "0" turns a bound off, as Nomad's
// http_max_conns_per_client = 0; bad values are errors naming the field.
func TestLimitsBlock(t *testing.T) {
	for _, tc := range []struct {
		src, err string
		want     httplimit.Config
	}{
		{src: "limits {\n http_read_timeout = \"5s\"\n http_body_timeout = \"1m\"\n http_write_timeout = \"2m\"\n http_idle_timeout = \"3m\"\n http_max_conns_per_client = 20\n}\n",
			want: httplimit.Config{ReadTimeout: 5 * time.Second, BodyTimeout: time.Minute, WriteTimeout: 2 * time.Minute,
				IdleTimeout: 3 * time.Minute, MaxConnsPerClient: 20}},
		{src: "limits {\n http_max_conns_per_client = 0\n http_write_timeout = \"0\"\n}\n",
			want: httplimit.Config{MaxConnsPerClient: -1, WriteTimeout: -1}},
		{src: "limits {}\n", want: httplimit.Config{}},
		{src: "limits {\n http_body_timeout = \"soon\"\n}\n", err: "limits.http_body_timeout"},
		{src: "limits {\n http_read_timeout = \"-1s\"\n}\n", err: "limits.http_read_timeout"},
		{src: "limits {\n http_idle_timeout = \"1us\"\n}\n", err: "limits.http_idle_timeout"},
		{src: "limits {\n http_max_conns_per_client = -5\n}\n", err: "limits.http_max_conns_per_client"},
		{src: "limits {\n rpc_max_conns_per_client = 5\n}\n", err: "rpc_max_conns_per_client"},
	} {
		path := filepath.Join(t.TempDir(), "agent.hcl")
		if err := os.WriteFile(path, []byte(tc.src), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := loadAgentFile(path)
		var c agent.Config
		if err == nil {
			err = f.applyTo(&c)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want one naming %s", tc.src, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if c.HTTP != tc.want {
			t.Errorf("%q: HTTP = %+v, want %+v", tc.src, c.HTTP, tc.want)
		}
	}
}

// TestExampleAgentFileLimits: docs/examples/agent.hcl, limits block
// included, loads and sets what it says.
func TestExampleAgentFileLimits(t *testing.T) {
	f, err := loadAgentFile("../../docs/examples/agent.hcl")
	if err != nil {
		t.Fatal(err)
	}
	c := agent.DefaultConfig()
	if err := f.applyTo(&c); err != nil {
		t.Fatal(err)
	}
	if c.HTTP.BodyTimeout != 30*time.Second || c.HTTP.MaxConnsPerClient != 100 {
		t.Fatalf("example limits = %+v", c.HTTP)
	}
}
