package cluster

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/processors/mirror"
)

// startMirrorServer starts one server of a three-server test cluster
// that mirrors to Kafka with m and schedules nothing.
func startMirrorServer(t *testing.T, name string, join []string, m *mirror.Settings) *server {
	t.Helper()
	return startServer(t, name, join, noScheduler, func(cfg *agent.Config) { cfg.Mirror = m })
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
