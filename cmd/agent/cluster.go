package agent

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/schedconfig"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// MinClusterSecretLen is the shortest cluster secret an agent accepts.
const MinClusterSecretLen = 16

// errNoClusterSecret refuses a multi-server agent without a cluster secret.
var errNoClusterSecret = errors.New("agent: a server that forms or joins a cluster (bootstrap_expect > 1 or join) needs a cluster secret, " +
	"the same on every server, which servers present to each other to join: set server { cluster_secret = \"...\" } in the agent file, " +
	"-cluster-secret or ORDO_CLUSTER_SECRET; make one with: head -c 32 /dev/urandom | base64")

// validateCluster checks the cluster secret: required when the server
// forms or joins a cluster of several, and long enough when set. -dev
// and a lone server (bootstrap_expect 1) may go without one; they then
// refuse every join.
func (c Config) validateCluster() error {
	if c.ClusterSecret != "" && len(c.ClusterSecret) < MinClusterSecretLen {
		return fmt.Errorf("agent: the cluster secret is %d characters; use at least %d (head -c 32 /dev/urandom | base64)",
			len(c.ClusterSecret), MinClusterSecretLen)
	}
	if c.Server && !c.Dev && c.ClusterSecret == "" && (c.BootstrapExpect > 1 || len(c.Join) > 0) {
		return errNoClusterSecret
	}
	return nil
}

// devClusterSecret gives a -dev agent without a secret a random one, kept
// in memory only: a dev server is alone and takes no joins.
func (a *Agent) devClusterSecret() error {
	if !a.cfg.Dev || a.cfg.ClusterSecret != "" {
		return nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("dev cluster secret: %w", err)
	}
	a.cfg.ClusterSecret = base64.RawURLEncoding.EncodeToString(b)
	return nil
}

// setClusterSecret sets the header that carries the cluster secret.
func (a *Agent) setClusterSecret(h http.Header) {
	if a.cfg.ClusterSecret != "" {
		h.Set(httpapi.ClusterSecretHeader, a.cfg.ClusterSecret)
	}
}

// peerStats is the raft node's StatsFetcher: it asks server id's API
// (its HTTP address from the servers projection) for its raft stats,
// presenting the cluster secret.
func (a *Agent) peerStats(ctx context.Context, id, _ string) (raftlog.PeerStats, error) {
	snap := a.store.Snapshot()
	s, err := servers.Get(projections.NewView(snap), id)
	snap.Close()
	if err != nil {
		return raftlog.PeerStats{}, fmt.Errorf("server %s's HTTP address: %w", id, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.HTTPAddr+"/v1/operator/raft/stats", nil)
	if err != nil {
		return raftlog.PeerStats{}, err
	}
	a.setClusterSecret(req.Header)
	resp, err := a.peerClient.Do(req)
	if err != nil {
		return raftlog.PeerStats{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return raftlog.PeerStats{}, fmt.Errorf("raft stats of %s at %s: %s", id, s.HTTPAddr, resp.Status)
	}
	var out raftlog.PeerStats
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("raft stats of %s: %w", id, err)
	}
	return out, nil
}

// autopilotProcessor runs the raft node's autopilot while this server
// leads (a leader-only processor).
type autopilotProcessor struct{ node *raftlog.Node }

// Name implements supervisor.Processor.
func (autopilotProcessor) Name() string { return "autopilot" }

// Run implements supervisor.Processor.
func (p autopilotProcessor) Run(ctx context.Context) error { return p.node.RunAutopilot(ctx) }

// autopilotFromLog is the raft node's source of the autopilot settings
// an operator set through the log (schedconfig.GetAutopilot); false
// until one is set, or when the row cannot be read (the node keeps its
// agent file's settings).
func (a *Agent) autopilotFromLog() (raftlog.AutopilotConfig, bool) {
	snap := a.store.Snapshot()
	defer snap.Close()
	c, err := schedconfig.GetAutopilot(projections.NewView(snap))
	if err != nil {
		a.log.Warn("autopilot configuration unreadable; keeping the agent's", "err", err)
		return raftlog.AutopilotConfig{}, false
	}
	if c == nil {
		return raftlog.AutopilotConfig{}, false
	}
	return raftlog.AutopilotConfig{CleanupDeadServers: c.CleanupDeadServers, LastContactThreshold: c.LastContactThreshold,
		MaxTrailingLogs: c.MaxTrailingLogs, MinQuorum: c.MinQuorum, ServerStabilizationTime: c.ServerStabilizationTime}, true
}

// handOver transfers leadership to another voter before a graceful
// shutdown when this server leads a cluster of several, so the cluster
// has a new leader within a round trip rather than an election timeout.
func (a *Agent) handOver() {
	if a.node == nil || !a.node.IsLeader() {
		return
	}
	list, err := a.node.Servers()
	if err != nil {
		return
	}
	voters := 0
	for _, s := range list {
		if s.Voter && s.ID != a.id {
			voters++
		}
	}
	if voters == 0 {
		return
	}
	a.log.Info("shutting down: handing leadership over")
	// raft bounds the transfer by its election timeout.
	if err := a.node.TransferLeadership(""); err != nil {
		a.log.Warn("leadership hand-over failed; stopping anyway", "err", err)
		return
	}
	id, _ := a.node.Leader()
	a.log.Info("leadership handed over", "leader", id)
}
