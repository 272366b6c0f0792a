package agent

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/nettest"
	"github.com/ordoplane/ordo/storage/waittest"
)

// A dev agent with the client role registers its own node; a client-only
// agent registers another against it; both become ready.
func TestClientRole(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := DevConfig()
	cfg.Client = DevClientConfig()
	cfg.Client.NodeName = "n1"
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Logger = quiet
	cfg.RaftLogOutput = io.Discard
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if srv.Client() == nil {
		t.Fatal("no client role")
	}

	ccfg := DefaultConfig()
	ccfg.Server = false
	ccfg.DataDir = t.TempDir()
	clientAPI := nettest.ClosedAddr(t) // the client's own API, where asked
	ccfg.Client = ClientConfig{Enabled: true, Servers: []string{srv.HTTPAddr()}, NodeName: "n2", Drivers: []string{"mock"},
		HTTPAddr: clientAPI}
	ccfg.Logger = quiet
	if err := ccfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cl, err := Start(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Shutdown()

	var nodes []struct{ ID, Name, Status string }
	if !waittest.Poll(20*time.Second, func() bool {
		nodes = nil
		resp, err := http.Get("http://" + srv.HTTPAddr() + "/v1/nodes")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&nodes)
			resp.Body.Close()
		}
		ready := map[string]bool{}
		for _, n := range nodes {
			ready[n.Name] = n.Status == "ready"
		}
		return ready["n1"] && ready["n2"]
	}) {
		t.Fatalf("nodes %+v, want n1 and n2 ready", nodes)
	}
	for _, n := range nodes {
		if n.Name != "n2" {
			continue
		}
		var node struct{ HTTPAddr string }
		resp, err := http.Get("http://" + srv.HTTPAddr() + "/v1/node/" + n.ID)
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&node)
		resp.Body.Close()
		if node.HTTPAddr != clientAPI {
			t.Fatalf("n2 advertises its API at %q, want %s as configured", node.HTTPAddr, clientAPI)
		}
	}
	if err := cl.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

func TestClientConfigValidate(t *testing.T) {
	c := DefaultConfig()
	c.Server = false
	if err := c.Validate(); err == nil {
		t.Error("no role accepted")
	}
	c.Client.Enabled = true
	c.DataDir = "d"
	if err := c.Validate(); err == nil {
		t.Error("client without servers accepted")
	}
	c.Client.Servers = []string{"127.0.0.1:4646"}
	c.Client.Drivers = []string{"lxc"}
	if err := c.Validate(); err == nil {
		t.Error("unknown driver accepted")
	}
	c.Client.Drivers = []string{"exec", "docker"}
	if err := c.Validate(); err != nil {
		t.Errorf("docker driver refused: %v", err)
	}
	c.Client.Drivers = nil
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}
