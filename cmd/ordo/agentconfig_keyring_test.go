package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// TestKeyringBlock: the agent file's keyring block sets the server token
// and the GC interval and threshold; bad values are errors naming
// keyring.<field> that never show the token.
func TestKeyringBlock(t *testing.T) {
	for _, tc := range []struct {
		src, err string
		want     agent.KeyringConfig
	}{
		{src: "keyring {\n server_token = \"s3cr3t-token\"\n gc_interval = \"5m\"\n gc_threshold = \"2h\"\n}\n",
			want: agent.KeyringConfig{ServerToken: "s3cr3t-token", GCInterval: 5 * time.Minute, GCThreshold: 2 * time.Hour}},
		{src: "keyring {\n gc_threshold = \"-1s\"\n}\n", want: agent.KeyringConfig{GCThreshold: -time.Second}},
		{src: "keyring {\n server_token = \"\"\n}\n", err: "keyring.server_token"},
		{src: "keyring {\n gc_interval = \"often\"\n}\n", err: "keyring.gc_interval"},
		{src: "keyring {\n gc_interval = \"0s\"\n}\n", err: "keyring.gc_interval"},
		{src: "keyring {\n gc_threshold = \"1 hour\"\n}\n", err: "keyring.gc_threshold"},
		{src: "keyring {\n gc_threshold = \"0\"\n}\n", err: "keyring.gc_threshold"},
		{src: "keyring {\n token = \"x\"\n}\n", err: "token"},
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
		if c.Keyring != tc.want {
			t.Errorf("%q: Keyring = %+v, want %+v", tc.src, c.Keyring, tc.want)
		}
	}
}

// TestServerTokenNotInAgentSelf: an agent started from a file with a
// keyring server token shows its GC settings in /v1/agent/self, never the
// token.
func TestServerTokenNotInAgentSelf(t *testing.T) {
	src := "keyring {\n server_token = \"s3cr3t-server-token\"\n gc_interval = \"7m\"\n}\n"
	resp, err := http.Get(agentFromFile(t, "agent.hcl", src) + "/v1/agent/self") // agentconfig_scheduler_test.go
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"GCInterval":420000000000`) {
		t.Fatalf("agent/self %d does not show the keyring settings:\n%s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), "s3cr3t-server-token") {
		t.Fatal("agent/self shows the keyring server token")
	}
}
