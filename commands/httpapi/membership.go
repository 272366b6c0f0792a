package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/server"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// ClusterSecretHeader carries the cluster secret (Config.ClusterSecret):
// servers present it to join and to read each other's raft stats, and it
// authorises membership changes (routeAccess: cluster, clusterOnly).
const ClusterSecretHeader = "X-Ordo-Cluster-Secret"

// errNoClusterSecret refuses a request without the cluster secret.
var errNoClusterSecret = &commands.ForbiddenError{Reason: "missing or wrong cluster secret (" + ClusterSecretHeader +
	"): joining and changing the servers need the secret every server shares (server.cluster_secret)"}

// errNoSecretConfigured refuses a request needing the cluster secret on a
// server that has none.
var errNoSecretConfigured = &commands.ForbiddenError{Reason: "this server has no cluster secret configured " +
	"(server.cluster_secret): it takes no joins and no membership changes by secret"}

// clusterSecretOK reports whether r carries this server's cluster secret.
// It compares digests in constant time, so neither the secret's bytes nor
// its length show in the time it takes.
func (s *Server) clusterSecretOK(r *http.Request) bool {
	if s.cfg.ClusterSecret == "" {
		return false
	}
	want := sha256.Sum256([]byte(s.cfg.ClusterSecret))
	got := sha256.Sum256([]byte(r.Header.Get(ClusterSecretHeader)))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// secretError is the refusal of a request without the cluster secret.
func (s *Server) secretError() error {
	if s.cfg.ClusterSecret == "" {
		return errNoSecretConfigured
	}
	return errNoClusterSecret
}

func (s *Server) membershipRoutes() {
	s.handle("GET /v1/operator/raft/stats", endpoint(s.raftStats))
	s.handle("DELETE /v1/operator/raft/peer", s.leader(endpoint(s.removePeer)))
	s.handle("PUT /v1/operator/raft/transfer-leadership", s.leader(endpoint(s.transferLeadership)))
	s.handle("POST /v1/operator/raft/transfer-leadership", s.leader(endpoint(s.transferLeadership)))
	s.handle("GET /v1/operator/autopilot/health", s.leaderOnly(endpoint(s.autopilotHealth)))
	s.handle("GET /v1/operator/autopilot/configuration", s.leaderOnly(endpoint(s.autopilotConfiguration)))
}

// raftNodeOf returns the raft node, or an error on a read-only server.
func (s *Server) raftNodeOf() (*raftlog.Node, error) {
	if s.cfg.Node == nil {
		return nil, &commands.ConflictError{Reason: "this server has no raft node: " + s.cfg.ReadOnly}
	}
	return s.cfg.Node, nil
}

// raftStats serves GET /v1/operator/raft/stats: this server's raft log
// position, which the leader's autopilot reads from every server.
func (s *Server) raftStats(w http.ResponseWriter, _ *http.Request) error {
	n, err := s.raftNodeOf()
	if err != nil {
		return err
	}
	st := n.LocalStats()
	st.Name = s.cfg.Self.Name
	writeJSON(w, http.StatusOK, st)
	return nil
}

// removePeer serves DELETE /v1/operator/raft/peer?id=: Nomad's
// RaftRemovePeerByID. It refuses a removal that could leave the cluster
// without a quorum (409).
func (s *Server) removePeer(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	id := q.Get("id")
	if id == "" {
		if q.Get("address") != "" {
			return commands.Invalid("address", "removal by address is not supported; pass ?id= (ordo operator raft list-peers shows the ids)")
		}
		return commands.Invalid("id", "required: the raft id of the server to remove")
	}
	n, err := s.raftNodeOf()
	if err != nil {
		return err
	}
	if err := n.RemovePeer(id); err != nil {
		return raftError(err, id)
	}
	s.cfg.Logger.Info("server removed from the raft configuration", "peer", id, "actor", actorOf(r))
	// The servers table follows. A leader that removed itself has stepped
	// down by now, so its record fails: logged, the removal stands.
	out, err := s.cfg.Pipeline.Run(r.Context(), "server.remove", request(r), server.Remove{ID: id})
	if err != nil {
		s.cfg.Logger.Warn("removed server not unrecorded", "peer", id, "err", err)
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, map[string]any{"Removed": id, "Index": out.Index})
	return nil
}

// transferLeadership serves PUT /v1/operator/raft/transfer-leadership:
// Nomad's RaftTransferLeadershipByID (?id=) and ByAddress (?address=);
// with neither, raft picks the most up-to-date voter.
func (s *Server) transferLeadership(w http.ResponseWriter, r *http.Request) error {
	n, err := s.raftNodeOf()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	id, addr := q.Get("id"), q.Get("address")
	if id != "" && addr != "" {
		return commands.Invalid("address", "pass id or address, not both")
	}
	if addr != "" {
		list, err := n.Servers()
		if err != nil {
			return raftError(err, addr)
		}
		for _, sv := range list {
			if sv.Address == addr {
				id = sv.ID
			}
		}
		if id == "" {
			return &commands.NotFoundError{Kind: "raft peer with address", ID: addr}
		}
	}
	from := s.cfg.Self.ID
	if err := n.TransferLeadership(id); err != nil {
		return raftError(err, id)
	}
	leader, _ := n.Leader()
	s.cfg.Logger.Info("leadership transferred", "from", from, "to", leader, "actor", actorOf(r))
	writeJSON(w, http.StatusOK, map[string]any{"From": from, "Leader": leader})
	return nil
}

// autopilotHealth serves GET /v1/operator/autopilot/health: Nomad's
// OperatorHealthReply, from the leader's autopilot; 200 whether or not
// the cluster is healthy (Healthy says), which nomad/api's client needs.
func (s *Server) autopilotHealth(w http.ResponseWriter, _ *http.Request) error {
	n, err := s.raftNodeOf()
	if err != nil {
		return err
	}
	h, err := n.AutopilotHealth()
	if err != nil {
		return raftError(err, "")
	}
	writeJSON(w, http.StatusOK, h)
	return nil
}

// autopilotConfiguration serves GET /v1/operator/autopilot/configuration:
// Nomad's AutopilotConfiguration, durations as Go strings, with ordo's
// DeadServerLastContactThreshold.
func (s *Server) autopilotConfiguration(w http.ResponseWriter, _ *http.Request) error {
	n, err := s.raftNodeOf()
	if err != nil {
		return err
	}
	c := n.AutopilotConfig()
	writeJSON(w, http.StatusOK, api.AutopilotConfiguration{CleanupDeadServers: c.CleanupDeadServers,
		LastContactThreshold: c.LastContactThreshold.String(), MaxTrailingLogs: c.MaxTrailingLogs, MinQuorum: c.MinQuorum,
		ServerStabilizationTime:        c.ServerStabilizationTime.String(),
		DeadServerLastContactThreshold: c.DeadServerLastContactThreshold.String()})
	return nil
}

// raftError maps raftlog's membership errors to the API's statuses.
func raftError(err error, id string) error {
	switch {
	case errors.Is(err, raftlog.ErrUnknownPeer):
		return &commands.NotFoundError{Kind: "raft peer", ID: id}
	case errors.Is(err, raftlog.ErrUnsafeChange), errors.Is(err, raftlog.ErrPeerConflict):
		return &commands.ConflictError{Reason: err.Error()}
	case errors.Is(err, raftlog.ErrNotLeader):
		return fmt.Errorf("%w: %v", commands.ErrNoLeader, err)
	}
	return err
}
