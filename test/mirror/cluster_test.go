package mirror

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/test/testagent"
)

// server is one agent of the test cluster and what it takes to restart it.
type server struct {
	name       string
	cfg        agent.Config
	a          *agent.Agent // nil while stopped
	http, raft string
}

func startServer(t *testing.T, name string, join []string, m *mirror.Settings) *server {
	t.Helper()
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.Name = name
	cfg.BootstrapExpect = 3
	cfg.Join = join
	cfg.Mirror = m
	cfg.Scheduler.Disabled = true
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	s := &server{name: name, cfg: cfg, a: a, http: a.HTTPAddr(), raft: a.RaftAddr()}
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *server) stop(t *testing.T) {
	t.Helper()
	if s.a == nil {
		return
	}
	if err := s.a.Shutdown(); err != nil {
		t.Errorf("shutdown %s: %v", s.name, err)
	}
	s.a = nil
}

// restart starts the stopped server again on its data and addresses.
func (s *server) restart(t *testing.T) {
	t.Helper()
	cfg := s.cfg
	cfg.HTTPAddr, cfg.RaftAddr = s.http, s.raft
	var lastErr error
	if !testagent.Poll(timeout, func() bool {
		s.a, lastErr = agent.Start(cfg)
		return lastErr == nil
	}) {
		t.Fatalf("restart %s: %v", s.name, lastErr)
	}
}

func leaderOf(list []*server) *server {
	var found *server
	for _, s := range list {
		if s.a != nil && s.a.Node().IsLeader() {
			if found != nil {
				return nil
			}
			found = s
		}
	}
	return found
}

func waitForLeader(t *testing.T, list []*server) *server {
	t.Helper()
	var l *server
	testagent.WaitFor(t, timeout, "a leader", func() bool {
		l = leaderOf(list)
		return l != nil
	})
	return l
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
