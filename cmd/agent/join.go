package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/commands/server"
	"github.com/ordoplane/ordo/processors/bootstrap"
)

// addKnown records a server and bootstraps when bootstrap-expect is met.
func (a *Agent) addKnown(s httpapi.JoinRequest) {
	a.mu.Lock()
	a.mu.known[s.ID] = s
	n := len(a.mu.known)
	known := a.knownLocked()
	a.mu.Unlock()
	if a.cfg.BootstrapExpect <= 1 || n < a.cfg.BootstrapExpect {
		return
	}
	a.bootstrapMu.Lock()
	defer a.bootstrapMu.Unlock()
	if !a.node.HasState() {
		servers := make([]raftServer, 0, n)
		for _, k := range known {
			servers = append(servers, raftServer{ID: k.ID, Address: k.RaftAddr})
		}
		a.log.Info("bootstrap-expect met: bootstrapping", "servers", n)
		if err := a.bootstrap(servers); err != nil {
			a.log.Error("bootstrap failed", "err", err)
		}
	}
}

func (a *Agent) knownLocked() []httpapi.JoinRequest {
	out := make([]httpapi.JoinRequest, 0, len(a.mu.known))
	for _, k := range a.mu.known {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (a *Agent) known() []httpapi.JoinRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.knownLocked()
}

// handleJoin is the API's join hook: remember the server and, on the
// leader, make it a voter and record its addresses.
func (a *Agent) handleJoin(ctx context.Context, req httpapi.JoinRequest) (httpapi.JoinResponse, error) {
	a.addKnown(req)
	if a.node.IsLeader() {
		if err := a.admit(ctx, req); err != nil {
			return httpapi.JoinResponse{}, err
		}
	}
	leader, _ := a.node.Leader()
	return httpapi.JoinResponse{Known: a.known(), Leader: leader}, nil
}

// admit adds a server as a voter (when it is not one) and registers it.
func (a *Agent) admit(ctx context.Context, req httpapi.JoinRequest) error {
	servers, err := a.node.Servers()
	if err != nil {
		return err
	}
	present := false
	for _, s := range servers {
		if s.ID == req.ID && s.Address == req.RaftAddr {
			present = true
		}
	}
	if !present {
		a.log.Info("adding voter", "peer", req.ID, "raft", req.RaftAddr)
		if err := a.node.AddVoter(req.ID, req.RaftAddr); err != nil {
			return fmt.Errorf("add voter %s: %w", req.ID, err)
		}
	}
	_, err = a.pipeline.Run(ctx, "server.register", commands.Request{Actor: "system:join"},
		server.Register{ID: req.ID, RaftAddr: req.RaftAddr, HTTPAddr: req.HTTPAddr})
	return err
}

// peersInConfiguration returns the known servers that are raft members.
func (a *Agent) peersInConfiguration() ([]bootstrap.Peer, error) {
	servers, err := a.node.Servers()
	if err != nil {
		return nil, err
	}
	known := map[string]httpapi.JoinRequest{}
	for _, k := range a.known() {
		known[k.ID] = k
	}
	var out []bootstrap.Peer
	for _, s := range servers {
		if k, ok := known[s.ID]; ok {
			out = append(out, bootstrap.Peer{ID: k.ID, RaftAddr: s.Address, HTTPAddr: k.HTTPAddr})
		}
	}
	return out, nil
}

// joinLoop announces this server to the -join addresses until it is a
// member of a cluster with a leader.
func (a *Agent) joinLoop(ctx context.Context) {
	client := &http.Client{Timeout: 5 * time.Second}
	self := httpapi.JoinRequest{ID: a.id, RaftAddr: a.node.Address(), HTTPAddr: a.httpAddr}
	t := time.NewTicker(a.cfg.JoinInterval)
	defer t.Stop()
	for {
		for _, addr := range a.cfg.Join {
			resp, err := postJoin(ctx, client, addr, self)
			if err != nil {
				a.log.Debug("join attempt failed", "addr", addr, "err", err)
				continue
			}
			for _, k := range resp.Known {
				a.addKnown(k)
			}
		}
		if a.member() {
			a.log.Info("joined cluster")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// member reports whether this server is in a raft configuration with a
// leader that has recorded its addresses.
func (a *Agent) member() bool {
	leader, _ := a.node.Leader()
	if leader == "" {
		return false
	}
	servers, err := a.node.Servers()
	if err != nil {
		return false
	}
	for _, s := range servers {
		if s.ID == a.id {
			return registered(a.store, a.id)
		}
	}
	return false
}

func postJoin(ctx context.Context, c *http.Client, addr string, self httpapi.JoinRequest) (httpapi.JoinResponse, error) {
	body, _ := json.Marshal(self)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+addr+"/v1/operator/raft/join", bytes.NewReader(body))
	if err != nil {
		return httpapi.JoinResponse{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return httpapi.JoinResponse{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return httpapi.JoinResponse{}, fmt.Errorf("join %s: %s", addr, resp.Status)
	}
	var out httpapi.JoinResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("join %s: %w", addr, err)
	}
	return out, nil
}
