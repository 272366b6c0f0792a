package mirror

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/test/testagent"
)

// server is one agent of the test cluster.
type server = testagent.Server

// startServer starts one server of a three-server test cluster.
func startServer(t *testing.T, name string, join []string, m *mirror.Settings) *server {
	t.Helper()
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.Name = name
	cfg.BootstrapExpect = 3
	cfg.Join = join
	cfg.Mirror = m
	cfg.Scheduler.Disabled = true
	return testagent.StartServer(t, cfg)
}

// postJSON POSTs to path at addr and decodes the answer into out.
func postJSON(addr, path string, out any) (int, error) {
	resp, err := http.Post("http://"+addr+path, "application/json", bytes.NewReader(nil))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
}
