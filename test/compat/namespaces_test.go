package compat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

// startDev starts a dev agent and a nomad/api client pointed at it, and
// waits until the leader has created the default namespace.
func startDev(t *testing.T) (*agent.Agent, *api.Client) {
	t.Helper()
	return testagent.StartDev(t, testagent.DevConfig(t.TempDir()))
}

func TestNamespacesWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	ns := c.Namespaces()

	wm, err := ns.Register(&api.Namespace{Name: "payments", Description: "payments team", Meta: map[string]string{"team": "pay"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wm.LastIndex == 0 {
		t.Fatal("register returned no index")
	}
	got, qm, err := ns.Info("payments", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "payments" || got.Description != "payments team" || got.Meta["team"] != "pay" || got.CreateIndex != wm.LastIndex {
		t.Fatalf("info = %+v (register index %d)", got, wm.LastIndex)
	}
	if qm.LastIndex < wm.LastIndex || !qm.KnownLeader {
		t.Fatalf("query meta = %+v", qm)
	}

	list, qm, err := ns.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The client sorts by CreateIndex, newest first.
	if len(list) != 2 || list[0].Name != "payments" || list[1].Name != "default" {
		t.Fatalf("list has %d namespaces: %+v", len(list), list)
	}
	if pl, _, err := ns.PrefixList("pay", nil); err != nil || len(pl) != 1 {
		t.Fatalf("prefix list = %+v, %v", pl, err)
	}

	// A blocking query at the list's index wakes on the next change.
	woke := make(chan uint64, 1)
	go func() {
		_, bm, err := ns.List(&api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 10 * time.Second})
		if err != nil {
			woke <- 0
			return
		}
		woke <- bm.LastIndex
	}()
	wm2, err := ns.Register(&api.Namespace{Name: "search"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case idx := <-woke:
		if idx < wm2.LastIndex {
			t.Fatalf("blocking query woke at %d, before the write at %d", idx, wm2.LastIndex)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocking query did not wake")
	}

	if _, err := ns.Delete("search", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ns.Info("search", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("info after delete: %v, want a 404", err)
	}
	if _, err := ns.Register(&api.Namespace{Name: "not valid!"}, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("register invalid name: %v, want a 400", err)
	}
	if _, err := ns.Delete("default", nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("delete default: %v, want a 400", err)
	}
}

func TestStatusAgentAndOperatorWithNomadClient(t *testing.T) {
	a, c := startDev(t)
	leader, err := c.Status().Leader()
	if err != nil || leader != a.RaftAddr() {
		t.Fatalf("leader = %q, %v; want %q", leader, err, a.RaftAddr())
	}
	peers, err := c.Status().Peers()
	if err != nil || len(peers) != 1 || peers[0] != a.RaftAddr() {
		t.Fatalf("peers = %v, %v", peers, err)
	}
	h, err := c.Agent().Health()
	if err != nil || h.Server == nil || !h.Server.Ok {
		t.Fatalf("health = %+v, %v", h, err)
	}
	self, err := c.Agent().Self()
	if err != nil || self.Member.Name == "" {
		t.Fatalf("self = %+v, %v", self, err)
	}
	rc, err := c.Operator().RaftGetConfiguration(nil)
	if err != nil || len(rc.Servers) != 1 || !rc.Servers[0].Leader || !rc.Servers[0].Voter || rc.Servers[0].ID != a.ID() {
		t.Fatalf("raft configuration = %+v, %v", rc, err)
	}
}

func TestEventStreamWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[api.Topic][]string{"Namespace": {"*"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Namespaces().Register(&api.Namespace{Name: "streamed"}, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for !seen["streamed"] {
		select {
		case evs, ok := <-stream:
			if !ok {
				t.Fatal("stream closed")
			}
			if evs.Err != nil {
				t.Fatal(evs.Err)
			}
			for _, e := range evs.Events {
				if e.Topic != "Namespace" || e.Index == 0 {
					t.Fatalf("event %+v", e)
				}
				seen[e.Key] = true
			}
		case <-ctx.Done():
			t.Fatalf("saw %v, never the new namespace", seen)
		}
	}
	if !seen["default"] {
		t.Fatalf("stream from index 1 missed the archived default namespace: %v", seen)
	}
}
