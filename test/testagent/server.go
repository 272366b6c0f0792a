package testagent

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// ServerTimeout bounds a restart's retries and WaitForLeader: generous, for
// a loaded two-core machine under -race.
const ServerTimeout = 30 * time.Second

// Server is one agent of a test cluster and what it takes to restart it.
type Server struct {
	Name string
	Cfg  agent.Config
	A    *agent.Agent // nil while stopped
	// HTTP and Raft are the addresses it first got; a restart reuses them.
	HTTP, Raft string
}

// StartServer starts an agent with cfg (named cfg.Name) and stops it when
// the test ends.
func StartServer(t testing.TB, cfg agent.Config) *Server {
	t.Helper()
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatalf("start %s: %v", cfg.Name, err)
	}
	s := &Server{Name: cfg.Name, Cfg: cfg, A: a, HTTP: a.HTTPAddr(), Raft: a.RaftAddr()}
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// Stop shuts the agent down; a stopped server's Stop does nothing.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.A == nil {
		return
	}
	if err := s.A.Shutdown(); err != nil {
		t.Errorf("shutdown %s: %v", s.Name, err)
	}
	s.A = nil
}

// Restart starts the stopped server again on its data directory and its
// first addresses, so its raft identity and address are unchanged.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	cfg := s.Cfg
	cfg.HTTPAddr, cfg.RaftAddr = s.HTTP, s.Raft
	var lastErr error
	// The ports were just released; retry in case the kernel holds them briefly.
	if !Poll(ServerTimeout, func() bool {
		s.A, lastErr = agent.Start(cfg)
		return lastErr == nil
	}) {
		t.Fatalf("restart %s on %s/%s: %v", s.Name, s.HTTP, s.Raft, lastErr)
	}
	if s.A.RaftAddr() != s.Raft || s.A.HTTPAddr() != s.HTTP {
		t.Fatalf("restarted %s at raft %s http %s, want %s %s", s.Name, s.A.RaftAddr(), s.A.HTTPAddr(), s.Raft, s.HTTP)
	}
}

// LeaderOf returns the one running server of list that leads, or nil.
func LeaderOf(list []*Server) *Server {
	var found *Server
	for _, s := range list {
		if s.A != nil && s.A.Node().IsLeader() {
			if found != nil {
				return nil
			}
			found = s
		}
	}
	return found
}

// WaitForLeader waits until exactly one running server of list leads and
// returns it.
func WaitForLeader(t testing.TB, list []*Server) *Server {
	t.Helper()
	var l *Server
	WaitFor(t, ServerTimeout, "a leader", func() bool {
		l = LeaderOf(list)
		return l != nil
	})
	return l
}
