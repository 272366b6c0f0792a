package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/nettest"
	"github.com/ordoplane/ordo/storage/raftlog"
	"github.com/ordoplane/ordo/test/testagent"
	"github.com/ordoplane/ordo/test/testlog"
)

// call sends method path to the server at addr with headers (and body as
// JSON when not nil) and returns the status and the body.
func call(t *testing.T, addr, method, path string, headers map[string]string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// secret is the header that presents the test cluster's secret.
var secret = map[string]string{httpapi.ClusterSecretHeader: testagent.ClusterSecret}

// startOne starts a server that bootstraps alone; logs, when not nil,
// receives its log.
func startOne(t *testing.T, name string, acl bool, logs *testlog.Buffer) *server {
	t.Helper()
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.Name, cfg.BootstrapExpect, cfg.ACL.Enabled = name, 1, acl
	if logs != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	s := testagent.StartServer(t, cfg)
	testagent.WaitForLeader(t, []*server{s})
	return s
}

// startJoiner starts a server that joins through the server at addr.
func startJoiner(t *testing.T, name, addr string, logs *testlog.Buffer) *server {
	t.Helper()
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.Name, cfg.Join = name, []string{addr}
	if logs != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return testagent.StartServer(t, cfg)
}

func raftServers(t *testing.T, s *server) []raftlog.Server {
	t.Helper()
	list, err := s.A.Node().Servers()
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func findServer(list []raftlog.Server, id string) (raftlog.Server, bool) {
	i := slices.IndexFunc(list, func(s raftlog.Server) bool { return s.ID == id })
	if i < 0 {
		return raftlog.Server{}, false
	}
	return list[i], true
}

// TestMembershipNeedsAuthority: a join, a removal and a leadership
// transfer without the cluster secret (with ACLs on, also with a
// management token but no secret for a join) are refused with 403 and
// leave the raft configuration as it was.
func TestMembershipNeedsAuthority(t *testing.T) {
	for _, acl := range []bool{false, true} {
		t.Run(fmt.Sprintf("acl=%v", acl), func(t *testing.T) {
			s := startOne(t, "s1", acl, nil)
			before := raftServers(t, s)
			evil := map[string]string{"ID": "evil-1", "RaftAddr": nettest.ClosedAddr(t), "HTTPAddr": nettest.ClosedAddr(t)}
			mgmt := ""
			if acl {
				st, body := call(t, s.HTTP, "PUT", "/v1/acl/bootstrap", nil, nil)
				var boot struct{ SecretID string }
				if st != http.StatusOK || json.Unmarshal([]byte(body), &boot) != nil {
					t.Fatalf("acl bootstrap: %d %s", st, body)
				}
				mgmt = boot.SecretID
			}
			refused := []struct {
				what, method, path string
				headers            map[string]string
				body               any
			}{
				{"join without credentials", "PUT", "/v1/operator/raft/join", nil, evil},
				{"join (POST) without credentials", "POST", "/v1/operator/raft/join", nil, evil},
				{"join with a wrong secret", "PUT", "/v1/operator/raft/join", map[string]string{httpapi.ClusterSecretHeader: "wrong-secret-0123456789"}, evil},
				{"join with a management token but no secret", "PUT", "/v1/operator/raft/join", map[string]string{"X-Nomad-Token": mgmt}, evil},
				{"remove-peer without credentials", "DELETE", "/v1/operator/raft/peer?id=" + s.A.ID(), nil, nil},
				{"transfer-leadership without credentials", "PUT", "/v1/operator/raft/transfer-leadership", nil, nil},
				{"raft stats without credentials", "GET", "/v1/operator/raft/stats", nil, nil},
			}
			for _, r := range refused {
				if st, body := call(t, s.HTTP, r.method, r.path, r.headers, r.body); st != http.StatusForbidden {
					t.Errorf("%s: %d %s, want 403", r.what, st, body)
				} else if !strings.Contains(body, "cluster secret") && !strings.Contains(body, "Permission denied") {
					t.Errorf("%s: 403 %s does not say why", r.what, body)
				}
			}
			if after := raftServers(t, s); !slices.Equal(after, before) {
				t.Fatalf("configuration changed by refused requests: %v, was %v", after, before)
			}
			// With authority, removing the last voter is still refused.
			auth := secret
			if acl {
				auth = map[string]string{"X-Nomad-Token": mgmt}
			}
			if st, body := call(t, s.HTTP, "DELETE", "/v1/operator/raft/peer?id="+s.A.ID(), auth, nil); st != http.StatusConflict ||
				!strings.Contains(body, "last voter") {
				t.Errorf("remove the last voter: %d %s, want 409 naming the last voter", st, body)
			}
			if st, body := call(t, s.HTTP, "PUT", "/v1/operator/raft/transfer-leadership", auth, nil); st != http.StatusConflict {
				t.Errorf("transfer leadership alone: %d %s, want 409", st, body)
			}
			if after := raftServers(t, s); !slices.Equal(after, before) {
				t.Fatalf("configuration changed: %v, was %v", after, before)
			}
		})
	}
}

// TestJoinOfUnreachableServer: the attack of issue 31 with the secret: a
// join naming an address nothing listens on adds a non-voter, so the one
// server keeps its quorum and serves writes; autopilot reports the
// newcomer unhealthy and never promotes it, and an operator removes it.
func TestJoinOfUnreachableServer(t *testing.T) {
	s := startOne(t, "s1", false, nil)
	evil := map[string]string{"ID": "evil-1", "RaftAddr": nettest.ClosedAddr(t), "HTTPAddr": nettest.ClosedAddr(t)}
	if st, body := call(t, s.HTTP, "PUT", "/v1/operator/raft/join", secret, evil); st != http.StatusOK {
		t.Fatalf("join with the secret: %d %s", st, body)
	}
	if e, ok := findServer(raftServers(t, s), "evil-1"); !ok || e.Voter {
		t.Fatalf("evil-1 in the configuration = %+v (present %v), want a non-voter", e, ok)
	}
	// Joins that would take a member's place are refused: another id at
	// the leader's raft address, and the leader's id at another address.
	before := raftServers(t, s)
	for _, j := range []map[string]string{
		{"ID": "evil-2", "RaftAddr": s.A.RaftAddr(), "HTTPAddr": nettest.ClosedAddr(t)},
		{"ID": s.A.ID(), "RaftAddr": nettest.ClosedAddr(t), "HTTPAddr": nettest.ClosedAddr(t)},
	} {
		if st, body := call(t, s.HTTP, "PUT", "/v1/operator/raft/join", secret, j); st != http.StatusConflict {
			t.Errorf("join %v: %d %s, want 409", j, st, body)
		}
	}
	if after := raftServers(t, s); !slices.Equal(after, before) {
		t.Fatalf("refused joins changed the configuration: %v, was %v", after, before)
	}
	c := testagent.NewClient(timeout)
	defer c.Close()
	for i := range 5 {
		res, err := c.PutNamespace(context.Background(), s.HTTP, fmt.Sprintf("after-join-%d", i), "")
		if err != nil || res.Status != http.StatusOK {
			t.Fatalf("write after the join: %+v %v", res, err)
		}
	}
	// Autopilot judges it (several rounds) and keeps it a non-voter.
	rounds := 0
	testagent.WaitFor(t, timeout, "autopilot to judge evil-1 unhealthy in several rounds", func() bool {
		var h raftlog.AutopilotHealth
		if st, _ := c.GetJSON(s.HTTP, "/v1/operator/autopilot/health", &h); st != http.StatusOK {
			return false
		}
		for _, sv := range h.Servers {
			if sv.ID == "evil-1" && !sv.Healthy && !sv.Voter && sv.SerfStatus == "failed" {
				rounds++
			}
		}
		return rounds >= 5
	})
	if e, _ := findServer(raftServers(t, s), "evil-1"); e.Voter {
		t.Fatal("evil-1 was promoted")
	}
	if st, body := call(t, s.HTTP, "DELETE", "/v1/operator/raft/peer?id=evil-1", secret, nil); st != http.StatusOK {
		t.Fatalf("remove evil-1: %d %s", st, body)
	}
	if _, ok := findServer(raftServers(t, s), "evil-1"); ok {
		t.Fatal("evil-1 still in the configuration after its removal")
	}
	if _, err := servers.Get(projections.NewView(s.A.Store()), "evil-1"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("evil-1 still in the servers table after its removal: %v", err)
	}
	if st, body := call(t, s.HTTP, "DELETE", "/v1/operator/raft/peer?id=evil-1", secret, nil); st != http.StatusNotFound {
		t.Fatalf("remove evil-1 again: %d %s, want 404", st, body)
	}
	if res, err := c.PutNamespace(context.Background(), s.HTTP, "after-removal", ""); err != nil || res.Status != http.StatusOK {
		t.Fatalf("write after the removal: %+v %v", res, err)
	}
}

// TestServersJoinAndArePromoted: two servers join a running one as
// non-voters (the second through the first, a follower that forwards the
// join with its secret to the leader), catch up and are promoted by
// autopilot; leadership moves
// on request and on a graceful shutdown; a healthy server whose removal
// would leave no healthy quorum is kept, a dead one is removed.
func TestServersJoinAndArePromoted(t *testing.T) {
	logs1, logs2 := &testlog.Buffer{}, &testlog.Buffer{}
	s1 := startOne(t, "s1", false, logs1)
	c := testagent.NewClient(timeout)
	defer c.Close()
	for i := range 50 {
		if res, err := c.PutNamespace(context.Background(), s1.HTTP, fmt.Sprintf("early-%02d", i), ""); err != nil || res.Status != http.StatusOK {
			t.Fatalf("early write: %+v %v", res, err)
		}
	}
	s2 := startJoiner(t, "s2", s1.HTTP, logs2)
	s3 := startJoiner(t, "s3", s2.HTTP, nil) // through a follower, which forwards to the leader
	list := []*server{s1, s2, s3}
	testagent.WaitFor(t, timeout, "s2 and s3 promoted to voters", func() bool {
		n := 0
		for _, sv := range raftServers(t, s1) {
			if sv.Voter {
				n++
			}
		}
		return n == 3
	})
	for _, id := range []string{s2.A.ID(), s3.A.ID()} {
		if !strings.Contains(logs1.String(), "server joined as a non-voter") || !strings.Contains(logs1.String(), "peer="+id) {
			t.Fatalf("s1's log does not show %s joining as a non-voter:\n%s", id, logs1.String())
		}
	}
	want := s1.A.FSM().Applied()
	for _, s := range list {
		testagent.WaitFor(t, timeout, s.Name+" caught up", func() bool { return s.A.FSM().Applied() >= want })
	}

	// Nomad's client reads autopilot's health.
	nc, err := api.NewClient(&api.Config{Address: "http://" + s2.HTTP})
	if err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, timeout, "a healthy cluster tolerating one failure", func() bool {
		h, _, err := nc.Operator().AutopilotServerHealth(nil)
		return err == nil && h.Healthy && h.FailureTolerance == 1 && len(h.Servers) == 3 && len(h.Voters) == 3
	})
	conf, _, err := nc.Operator().AutopilotGetConfiguration(nil)
	if err != nil || conf.ServerStabilizationTime.String() != "1s" || conf.CleanupDeadServers {
		t.Fatalf("autopilot configuration = %+v, %v", conf, err)
	}
	// What an operator sets goes through the log: the next leader keeps it.
	conf.MaxTrailingLogs = 777
	if _, err := nc.Operator().AutopilotSetConfiguration(conf, nil); err != nil {
		t.Fatal(err)
	}

	// transfer-leadership moves it to the server named.
	if st, body := call(t, s3.HTTP, "PUT", "/v1/operator/raft/transfer-leadership?id="+s2.A.ID(), secret, nil); st != http.StatusOK {
		t.Fatalf("transfer leadership to s2: %d %s", st, body)
	}
	testagent.WaitFor(t, timeout, "s2 to lead", func() bool { return testagent.LeaderOf(list) == s2 })
	testagent.WaitFor(t, timeout, "the new leader to hold the autopilot settings set on the old one", func() bool {
		got := s2.A.Node().AutopilotConfig()
		return got.MaxTrailingLogs == 777 && got.ServerStabilizationTime == time.Second
	})

	// A graceful shutdown of the leader hands leadership over first.
	s2.Stop(t)
	if !strings.Contains(logs2.String(), "leadership handed over") {
		t.Fatalf("s2 stopped without handing leadership over:\n%s", logs2.String())
	}
	live := []*server{s1, s3}
	leader := testagent.WaitForLeader(t, live)
	follower := s1
	if leader == s1 {
		follower = s3
	}
	if res, err := c.PutNamespace(context.Background(), leader.HTTP, "after-handover", ""); err != nil || res.Status != http.StatusOK {
		t.Fatalf("write after the hand-over: %+v %v", res, err)
	}

	// s2 is dead: removing the healthy follower would leave {leader, s2}
	// with one healthy voter of two, so it is refused; removing s2 is not.
	s2ID := s2.Cfg.Name // replaced below: a stopped server's agent is gone
	for _, sv := range raftServers(t, leader) {
		if sv.ID != s1.A.ID() && sv.ID != s3.A.ID() {
			s2ID = sv.ID
		}
	}
	testagent.WaitFor(t, timeout, "autopilot to judge s2 unhealthy and the others healthy", func() bool {
		var h raftlog.AutopilotHealth
		if st, _ := c.GetJSON(leader.HTTP, "/v1/operator/autopilot/health", &h); st != http.StatusOK || len(h.Servers) != 3 {
			return false
		}
		for _, sv := range h.Servers {
			if sv.Healthy == (sv.ID == s2ID) {
				return false
			}
		}
		return h.FailureTolerance == 0
	})
	before := raftServers(t, leader)
	if st, body := call(t, follower.HTTP, "DELETE", "/v1/operator/raft/peer?id="+follower.A.ID(), secret, nil); st != http.StatusConflict ||
		!strings.Contains(body, "quorum") {
		t.Fatalf("remove the healthy follower beside a dead voter: %d %s, want 409", st, body)
	}
	if after := raftServers(t, leader); !slices.Equal(after, before) {
		t.Fatalf("refused removal changed the configuration: %v, was %v", after, before)
	}
	if st, body := call(t, follower.HTTP, "DELETE", "/v1/operator/raft/peer?id="+s2ID, secret, nil); st != http.StatusOK {
		t.Fatalf("remove dead s2: %d %s", st, body)
	}
	after := raftServers(t, leader)
	if _, ok := findServer(after, s2ID); ok || len(after) != 2 {
		t.Fatalf("configuration after removing s2 = %v", after)
	}
	if res, err := c.PutNamespace(context.Background(), follower.HTTP, "after-removal", ""); err != nil || res.Status != http.StatusOK {
		t.Fatalf("write after the removal: %+v %v", res, err)
	}
}

// TestCleanupDeadServers: with cleanup_dead_servers on, autopilot removes
// a voter that has not answered for dead_server_last_contact_threshold,
// and the cluster keeps serving writes.
func TestCleanupDeadServers(t *testing.T) {
	var list []*server
	for i := range 3 {
		cfg := testagent.ServerConfig(t.TempDir())
		cfg.Name, cfg.BootstrapExpect = fmt.Sprintf("c%d", i+1), 3
		cfg.Autopilot.CleanupDeadServers = true
		cfg.Autopilot.DeadServerLastContactThreshold = 500 * time.Millisecond
		if i > 0 {
			cfg.Join = []string{list[0].HTTP}
		}
		list = append(list, testagent.StartServer(t, cfg))
	}
	leader := testagent.WaitForLeader(t, list)
	var victim *server
	for _, s := range list {
		if s != leader {
			victim = s
		}
	}
	id := victim.A.ID()
	testagent.WaitFor(t, timeout, "three voters", func() bool {
		n := 0
		for _, sv := range raftServers(t, leader) {
			if sv.Voter {
				n++
			}
		}
		return n == 3
	})
	victim.Stop(t)
	testagent.WaitFor(t, timeout, "autopilot to remove the dead server", func() bool {
		_, ok := findServer(raftServers(t, leader), id)
		return !ok
	})
	if n := len(raftServers(t, leader)); n != 2 {
		t.Fatalf("%d servers left, want 2", n)
	}
	c := testagent.NewClient(timeout)
	defer c.Close()
	if res, err := c.PutNamespace(context.Background(), leader.HTTP, "after-cleanup", ""); err != nil || res.Status != http.StatusOK {
		t.Fatalf("write after the cleanup: %+v %v", res, err)
	}
}
