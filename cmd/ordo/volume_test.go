package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands/csi/csitest"
)

// TestVolumeCLI runs ordo volume register/status/deregister and ordo
// plugin status against a dev agent: a second register merges (N18),
// status with namespace * and a prefix, deregister by exact id (N19),
// plugin status by prefix (N19).
func TestVolumeCLI(t *testing.T) {
	_, addr := startJobAgent(t)
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(append(args, "-address", addr)...)
		if code != want {
			t.Fatalf("ordo %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out + errOut
	}
	reg, _ := json.Marshal(csitest.PluginNode("n1", "p1", nil).Node)
	resp, err := http.Post(addr+"/v1/client/register", "application/json", strings.NewReader(string(reg)))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("register node: %v %v", resp, err)
	}
	resp.Body.Close()
	dir := t.TempDir()
	write := func(id, extra string) string {
		path := filepath.Join(dir, id+".hcl")
		src := `id = "` + id + `"
type = "csi"
plugin_id = "hostpath"
capability {
  access_mode = "single-node-writer"
  attachment_mode = "file-system"
}
secrets { token = "hunter2" }
` + extra
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run(0, "volume", "register", write("db", ""))
	run(0, "volume", "register", write("db-2", ""))
	if out := run(0, "volume", "register", write("db", `parameters { tier = "fast" }`)); !strings.Contains(out, "registered") {
		t.Fatalf("second register: %s", out)
	}
	out := run(0, "volume", "status", "-json", "db")
	if !strings.Contains(out, `"tier": "fast"`) || strings.Contains(out, "hunter2") {
		t.Fatalf("status after merge (parameters merged, secrets redacted):\n%s", out)
	}
	out = run(0, "volume", "status", "-namespace", "*", "db-")
	if !strings.Contains(out, "db-2") || !strings.Contains(out, "Schedulable") {
		t.Fatalf("status by prefix:\n%s", out)
	}
	if out := run(1, "volume", "register", write("bad", `capacity_min = "lots"`)); !strings.Contains(out, "capacity_min") {
		t.Fatalf("bad file: %s", out)
	}
	if out := run(1, "volume", "deregister", "d"); !strings.Contains(out, "not found") {
		t.Fatalf("deregister of a prefix: %s", out)
	}
	run(0, "volume", "deregister", "db")
	out = run(0, "volume", "status")
	if strings.Contains(out, "db ") || !strings.Contains(out, "db-2") {
		t.Fatalf("after deregistering db:\n%s", out)
	}
	out = run(0, "plugin", "status", "host")
	if !strings.Contains(out, "hostpath") || !strings.Contains(out, "Nodes Healthy") || !strings.Contains(out, "CREATE_DELETE_VOLUME") {
		t.Fatalf("plugin status by prefix:\n%s", out)
	}
	if out := run(0, "plugin", "status"); !strings.Contains(out, "1/0") {
		t.Fatalf("plugin list:\n%s", out)
	}
}
