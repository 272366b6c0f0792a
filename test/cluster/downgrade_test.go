package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/test/testagent"
)

// newerNamespaces is the namespaces projection of a newer build.
type newerNamespaces struct{ namespaces.Projection }

func (newerNamespaces) Version() int { return namespaces.Projection{}.Version() + 1 }

// newerProjections is the projection set of a build newer than this one.
func newerProjections() []projections.Projection {
	var out []projections.Projection
	for _, p := range all.Projections() {
		if p.Name() == "namespaces" {
			p = newerNamespaces{}
		}
		out = append(out, p)
	}
	return out
}

// TestOlderServerHaltsOnNewerSnapshot: a server of an older build that
// joins a cluster led by a newer one is caught up with a raft snapshot of
// the newer build's state. It refuses to install it: its FSM halts, it
// says so in /v1/agent/health and leaves raft, and the cluster goes on
// writing. Its data directory now holds the newer state, so the older
// build refuses to start on it; the newer build starts and catches up.
func TestOlderServerHaltsOnNewerSnapshot(t *testing.T) {
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.Name, cfg.BootstrapExpect, cfg.Projections = "new-1", 1, newerProjections()
	cfg.TrailingLogs = 2 // a snapshot truncates the log: a joiner needs the snapshot
	s1 := testagent.StartServer(t, cfg)
	testagent.WaitForLeader(t, []*server{s1})
	c := testagent.NewClient(timeout)
	defer c.Close()
	put := func(name string) {
		t.Helper()
		if res, err := c.PutNamespace(context.Background(), s1.HTTP, name, ""); err != nil || res.Status != http.StatusOK {
			t.Fatalf("write %s: %+v %v", name, res, err)
		}
	}
	for i := range 10 {
		put(fmt.Sprintf("before-%d", i))
	}
	if err := s1.A.Node().TakeSnapshot(); err != nil {
		t.Fatal(err)
	}

	old := startJoiner(t, "old-2", s1.HTTP, nil) // this build's projections: older
	testagent.WaitFor(t, timeout, "the older server to halt", func() bool { return old.A.FSM().Halt() != nil })
	h := old.A.FSM().Halt()
	if !errors.Is(h, fsm.ErrDowngrade) || !strings.Contains(h.Error(), "projection namespaces") {
		t.Fatalf("halt: %v", h)
	}
	if st, body := call(t, old.HTTP, "GET", "/v1/agent/health", nil, nil); st != http.StatusServiceUnavailable ||
		!strings.Contains(body, `"halted":true`) || !strings.Contains(body, "projection namespaces") {
		t.Fatalf("health of the halted server: %d %s", st, body)
	}
	testagent.WaitFor(t, timeout, "the halted server to leave raft", func() bool { return old.A.Node().State() == "Shutdown" })
	put("after-the-halt") // the cluster goes on

	old.Stop(t)
	if _, err := agent.Start(oldCfg(old)); !errors.Is(err, fsm.ErrDowngrade) {
		t.Fatalf("the older build restarted on a directory holding the newer state: %v", err)
	}
	old.Cfg.Projections = newerProjections()
	old.Restart(t)
	want := s1.A.FSM().Applied()
	testagent.WaitFor(t, timeout, "the upgraded server to catch up", func() bool { return old.A.FSM().Applied() >= want })
	names, err := testagent.StoreNamespaces(old.A.Store())
	if err != nil || !names["before-9"] || !names["after-the-halt"] {
		t.Fatalf("namespaces on the upgraded server: %v %v", names, err)
	}
}

// oldCfg is s's configuration at its first addresses.
func oldCfg(s *server) agent.Config {
	cfg := s.Cfg
	cfg.HTTPAddr, cfg.RaftAddr = s.HTTP, s.Raft
	return cfg
}
