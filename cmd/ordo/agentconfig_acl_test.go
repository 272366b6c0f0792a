package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

func TestACLBlock(t *testing.T) {
	for _, tc := range []struct {
		src, err string
		want     agent.ACLConfig
	}{
		{src: "acl {\n enabled = true\n token_ttl = \"10s\"\n policy_ttl = \"1m\"\n role_ttl = \"2m\"\n token_min_expiration_ttl = \"30s\"\n token_max_expiration_ttl = \"1h\"\n}\n",
			want: agent.ACLConfig{Enabled: true, TokenTTL: 10 * time.Second, PolicyTTL: time.Minute, RoleTTL: 2 * time.Minute,
				TokenMinExpirationTTL: 30 * time.Second, TokenMaxExpirationTTL: time.Hour}},
		{src: "acl {\n token_ttl = \"soon\"\n}\n", err: "acl.token_ttl"},
		{src: "acl {\n role_ttl = \"-1s\"\n}\n", err: "acl.role_ttl"},
		{src: "acl {\n token_min_expiration_ttl = \"2h\"\n token_max_expiration_ttl = \"1h\"\n}\n", err: "acl.token_min_expiration_ttl"},
		{src: "acl {\n enable = true\n}\n", err: "enable"},
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
		if c.ACL != tc.want {
			t.Errorf("%q: ACL = %+v, want %+v", tc.src, c.ACL, tc.want)
		}
	}
}
