package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/processors/launcher"
	"github.com/ordoplane/ordo/test/testagent"
	"github.com/ordoplane/ordo/test/testlog"
)

// An idle dev agent appends nothing: its launcher registers its component
// once, then heartbeats to the leader's memory. Over twelve heartbeats
// the applied index does not move, and GET /v1/components shows the
// component alive with a recent last heartbeat. A heartbeat over HTTP,
// as another server's launcher sends it, appends nothing either.
func TestIdleAgentAppendsNothing(t *testing.T) {
	const beat = 250 * time.Millisecond
	cfg := agent.DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Logger = slog.New(slog.NewTextHandler(&testlog.Buffer{}, nil))
	cfg.RaftLogOutput = io.Discard
	cfg.Launcher.Heartbeat = beat
	cfg.ClusterSecret = "component-test-secret-0123"
	s := testagent.StartServer(t, cfg)
	type component struct {
		Server        string
		Status        string
		LastHeartbeat *time.Time
	}
	get := func() (component, bool) {
		resp, err := http.Get("http://" + s.A.HTTPAddr() + "/v1/components?kind=launcher")
		if err != nil {
			return component{}, false
		}
		defer resp.Body.Close()
		var cs []component
		if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&cs) != nil || len(cs) != 1 {
			return component{}, false
		}
		return cs[0], true
	}
	var first component
	testagent.WaitFor(t, 30*time.Second, "the launcher's component heartbeating", func() bool {
		c, ok := get()
		first = c
		return ok && c.Status == "alive" && c.LastHeartbeat != nil
	})
	before := s.A.FSM().Applied()
	var last component
	testagent.WaitFor(t, 30*time.Second, "twelve heartbeats", func() bool {
		c, ok := get()
		last = c
		return ok && c.LastHeartbeat != nil && c.LastHeartbeat.Sub(*first.LastHeartbeat) >= 12*beat
	})
	if after := s.A.FSM().Applied(); after != before {
		t.Fatalf("an idle agent appended %d entries over twelve component heartbeats", after-before)
	}
	if last.Status != "alive" || last.Server != s.A.ID() {
		t.Fatalf("component %+v, want server %s alive", last, s.A.ID())
	}

	// Another server's launcher heartbeats over HTTP (with the cluster
	// secret); the leader refuses the heartbeat of a component it does not
	// know, which makes the launcher register again.
	c, err := api.New([]string{s.A.HTTPAddr()}, api.WithHeader(httpapi.ClusterSecretHeader, "component-test-secret-0123"))
	if err != nil {
		t.Fatal(err)
	}
	b := launcher.HTTPBeater{Client: c}
	if err := b.Beat(context.Background(), "launcher", s.A.ID()); err != nil {
		t.Fatalf("heartbeat over HTTP: %v", err)
	}
	var nf *commands.NotFoundError
	if err := b.Beat(context.Background(), "launcher", "no-such-server"); !errors.As(err, &nf) {
		t.Fatalf("heartbeat of an unknown component: %v, want a NotFoundError", err)
	}
	if after := s.A.FSM().Applied(); after != before {
		t.Fatalf("heartbeats over HTTP appended %d entries", after-before)
	}
	unauth, err := api.New([]string{s.A.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	if err := (launcher.HTTPBeater{Client: unauth}).Beat(context.Background(), "launcher", s.A.ID()); err == nil {
		t.Fatal("a heartbeat without the cluster secret was accepted")
	}
}
