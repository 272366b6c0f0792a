package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// TestPluginDockerBlock: the agent file's plugin "docker" block sets the
// client's docker driver; bad values and other plugins are errors naming
// the field.
func TestPluginDockerBlock(t *testing.T) {
	for _, tc := range []struct {
		src, err string
		want     agent.DockerConfig
	}{
		{src: `plugin "docker" {
  config {
    endpoint         = "unix:///run/d.sock"
    allow_privileged = true
    volumes { enabled = true }
    gc {
      container   = false
      image       = false
      image_delay = "10m"
    }
  }
}
`, want: agent.DockerConfig{Endpoint: "unix:///run/d.sock", AllowPrivileged: true, VolumesEnabled: true, KeepContainers: true,
			KeepImages: true, ImageDelay: 10 * time.Minute}},
		{src: "plugin \"docker\" {\n config {\n endpoint = \"tcp://127.0.0.1:2375\"\n }\n}\n", want: agent.DockerConfig{Endpoint: "tcp://127.0.0.1:2375"}},
		{src: "plugin \"docker\" {}\n", want: agent.DockerConfig{}},
		{src: "plugin \"docker\" {\n config {\n endpoint = \"/var/run/docker.sock\"\n }\n}\n", err: "config.endpoint"},
		{src: "plugin \"raw_exec\" {}\n", err: `plugin "raw_exec"`},
		{src: "plugin \"docker\" {}\nplugin \"docker\" {}\n", err: "set twice"},
		{src: "plugin \"docker\" {\n config {\n gc { image_delay = \"soon\" }\n }\n}\n", err: "config.gc.image_delay"},
		{src: "plugin \"docker\" {\n config {\n gc { dangling_containers {} }\n }\n}\n", err: "dangling_containers"},
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
		if c.Client.Docker != tc.want {
			t.Errorf("%q: Docker = %+v, want %+v", tc.src, c.Client.Docker, tc.want)
		}
	}
}
