package agent

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/waittest"
)

func TestDevAgentNamespaces(t *testing.T) {
	cfg := DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown()
	base := "http://" + a.HTTPAddr()
	if !waittest.Poll(10*time.Second, func() bool {
		var resp *http.Response
		resp, err = http.Get(base + "/v1/namespace/default")
		if resp != nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	}) {
		t.Fatalf("default namespace never appeared: %v", err)
	}
	req, _ := http.NewRequest("PUT", base+"/v1/namespace/payments", strings.NewReader(`{"Name":"payments","Description":"payments team"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("apply: %d %s %s", resp.StatusCode, resp.Header.Get("X-Nomad-Index"), b)
	resp, err = http.Get(base + "/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list) != 2 {
		t.Fatalf("namespaces: %v", list)
	}
	resp, _ = http.Get(base + "/v1/operator/log")
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("log: %s", b)
}
