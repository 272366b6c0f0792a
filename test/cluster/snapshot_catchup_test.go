// This file tests that a server far behind catches up through a raft
// snapshot carrying the archive and the projections.

package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/testagent"
)

func config(t *testing.T) agent.Config {
	cfg := agent.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 200 * time.Millisecond
	cfg.JoinInterval = 50 * time.Millisecond
	cfg.ClusterSecret = "snapshot-test-cluster-secret"
	cfg.NoSync = true
	cfg.TrailingLogs = 8
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RaftLogOutput = io.Discard
	return cfg
}

// put writes the namespace name through addr. A 503 (an election under
// load: no leader to forward to) is asked again; the write is an upsert of
// the same namespace, so asking twice is harmless.
func put(t *testing.T, addr, name string) {
	t.Helper()
	testagent.WaitFor(t, 30*time.Second, "put "+name, func() bool {
		req, _ := http.NewRequest(http.MethodPut, "http://"+addr+"/v1/namespace/"+name, strings.NewReader(`{"Description":"before the snapshot"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("put %s: %s", name, resp.Status)
		}
		return resp.StatusCode == http.StatusOK
	})
}

func TestLateServerCatchesUpFromSnapshot(t *testing.T) {
	cfg := config(t)
	cfg.BootstrapExpect = 1
	leader, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Shutdown()
	waittest.For(t, 20*time.Second, "leader", leader.Node().IsLeader)
	for i := range 200 {
		put(t, leader.HTTPAddr(), fmt.Sprintf("ns-%03d", i))
	}
	// Snapshot and truncate the log so only a snapshot can bring a new server up to date.
	if err := leader.Node().TakeSnapshot(); err != nil {
		t.Fatal(err)
	}
	for i := 200; i < 210; i++ {
		put(t, leader.HTTPAddr(), fmt.Sprintf("ns-%03d", i))
	}
	if first := leader.Node().Stats()["last_snapshot_index"]; first == "0" {
		t.Fatalf("no snapshot taken")
	}

	lcfg := config(t)
	lcfg.Join = []string{leader.HTTPAddr()}
	late, err := agent.Start(lcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Shutdown()
	want := leader.FSM().Applied()
	waittest.For(t, 20*time.Second, "late server to apply the leader's index", func() bool { return late.FSM().Applied() >= want })

	// The follower got the early history through InstallSnapshot: raft
	// records the installed snapshot in its own store.
	if got := late.Node().Stats()["last_snapshot_index"]; got == "0" || got == "" {
		t.Fatalf("late server did not install a snapshot (last_snapshot_index %q)", got)
	}
	// Both hold the same history, so the same projections, compared when
	// both stand at the same applied index after the leader recorded the
	// late server (its join keeps appending until then).
	var diff []string
	waittest.For(t, 20*time.Second, "late server to be registered and match the leader", func() bool {
		if _, err := servers.Get(projections.NewView(leader.Store()), late.ID()); err != nil {
			return false
		}
		at := leader.FSM().Applied()
		if late.FSM().Applied() != at {
			return false
		}
		diff = differing(t, leader.Store(), late.Store())
		ln, _ := archive.Len(leader.Store())
		fn, _ := archive.Len(late.Store())
		same := ln == fn && leader.FSM().Applied() == at && late.FSM().Applied() == at
		return same && len(diff) == 0
	})
	// The earliest events came only through the snapshot: the raft log no longer has them.
	var seen bool
	archive.Scan(late.Store(), 1, 10, func(uint64, uint32, []byte) error { seen = true; return nil })
	if !seen {
		t.Fatal("late server lacks the archive's first events")
	}
}

// differing names the projections whose checksums differ between a and b.
func differing(t *testing.T, a, b kv.Reader) []string {
	t.Helper()
	var out []string
	for _, p := range all.Projections() {
		x, err := projections.Checksum(a, p)
		if err != nil {
			t.Fatal(err)
		}
		y, err := projections.Checksum(b, p)
		if err != nil {
			t.Fatal(err)
		}
		if x != y {
			out = append(out, p.Name())
		}
	}
	return out
}
