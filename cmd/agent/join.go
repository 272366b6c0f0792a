package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/commands/server"
	"github.com/ordoplane/ordo/processors/bootstrap"
	"github.com/ordoplane/ordo/storage/raftlog"
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

// handleJoin is the API's join hook, reached only by callers that
// presented the cluster secret: remember the server and, on the leader,
// admit it as a non-voter and record its addresses.
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

// admit adds a server as a non-voter (when it is not a member), which
// leaves the quorum as it is whether or not the server is reachable;
// autopilot promotes it once it has caught up (storage/raftlog's
// AddNonvoter). Then it registers the server's addresses.
func (a *Agent) admit(ctx context.Context, req httpapi.JoinRequest) error {
	added, err := a.node.AddNonvoter(req.ID, req.RaftAddr)
	if err != nil {
		return membershipError(err)
	}
	if added {
		a.log.Info("server joined as a non-voter", "peer", req.ID, "raft", req.RaftAddr, "http", req.HTTPAddr)
	}
	_, err = a.pipeline.Run(ctx, "server.register", commands.Request{Actor: "system:join"},
		server.Register{ID: req.ID, RaftAddr: req.RaftAddr, HTTPAddr: req.HTTPAddr})
	return err
}

// membershipError maps raftlog's membership errors to the API's.
func membershipError(err error) error {
	switch {
	case errors.Is(err, raftlog.ErrPeerConflict), errors.Is(err, raftlog.ErrUnsafeChange):
		return &commands.ConflictError{Reason: err.Error()}
	case errors.Is(err, raftlog.ErrNotLeader):
		return fmt.Errorf("%w: %v", commands.ErrNoLeader, err)
	}
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
			resp, err := a.postJoin(ctx, client, addr, self)
			if err != nil {
				if errors.Is(err, errJoinRefused) {
					a.log.Warn("join refused: is the cluster secret the same on every server?", "addr", addr, "err", err)
				} else {
					a.log.Debug("join attempt failed", "addr", addr, "err", err)
				}
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

// errJoinRefused is a join the other server refused for want of authority.
var errJoinRefused = errors.New("join refused")

// postJoin announces self to the server at addr through api.Client,
// presenting the cluster secret when this server has one.
func (a *Agent) postJoin(ctx context.Context, hc *http.Client, addr string, self httpapi.JoinRequest) (httpapi.JoinResponse, error) {
	opts := []api.Option{api.WithHTTPClient(hc), api.WithLogger(a.log)}
	if a.cfg.ClusterSecret != "" {
		opts = append(opts, api.WithHeader(httpapi.ClusterSecretHeader, a.cfg.ClusterSecret))
	}
	var out httpapi.JoinResponse
	c, err := api.New([]string{addr}, opts...)
	if err != nil {
		return out, fmt.Errorf("join %s: %w", addr, err)
	}
	if err := c.Put(ctx, "/v1/operator/raft/join", self, &out); err != nil {
		if e, ok := errors.AsType[*api.Error](err); ok && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden) {
			return out, fmt.Errorf("%w: join %s: %d: %w", errJoinRefused, addr, e.Status, err)
		}
		return out, fmt.Errorf("join %s: %w", addr, err)
	}
	return out, nil
}
