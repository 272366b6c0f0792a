package raftlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	autopilot "github.com/hashicorp/raft-autopilot"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrUnknownPeer is returned for a server that is not in the raft
// configuration.
var ErrUnknownPeer = errors.New("ordo: no such server in the raft configuration")

// ErrUnsafeChange is returned for a configuration change that could leave
// the cluster without a quorum; the error wrapping it says why.
var ErrUnsafeChange = errors.New("ordo: refused: the change could leave the cluster without a quorum")

// ErrPeerConflict is returned for a join whose id or address clashes with
// a server already in the configuration in a way only an operator may
// resolve.
var ErrPeerConflict = errors.New("ordo: server conflicts with the raft configuration")

// AutopilotConfig tunes autopilot, which promotes a joined server from
// non-voter to voter once it has caught up and stayed healthy, reports
// every server's health, and may remove dead servers (Nomad's autopilot
// block; docs/operations.md). The zero value takes the defaults.
type AutopilotConfig struct {
	// CleanupDeadServers removes a server that has not answered the
	// leader for DeadServerLastContactThreshold, never below a quorum of
	// the voters nor below MinQuorum voters; default off.
	CleanupDeadServers bool
	// LastContactThreshold is how long a server may go without contact
	// with the leader and stay healthy; default 200ms.
	LastContactThreshold time.Duration
	// MaxTrailingLogs is how many entries a server may lag the leader's
	// last index and stay healthy; default 250.
	MaxTrailingLogs uint64
	// MinQuorum is the fewest voters CleanupDeadServers leaves; default 0.
	MinQuorum uint
	// ServerStabilizationTime is how long a non-voter must stay healthy
	// before it is promoted; default 10s.
	ServerStabilizationTime time.Duration
	// DeadServerLastContactThreshold is how long a server must go
	// unanswered before CleanupDeadServers counts it dead; default 24h.
	DeadServerLastContactThreshold time.Duration
	// UpdateInterval is the time between health checks of every server;
	// default 2s.
	UpdateInterval time.Duration
	// ReconcileInterval is the time between promotion (and removal)
	// rounds; default 10s.
	ReconcileInterval time.Duration
}

// withDefaults returns c with every zero field set to its default.
func (c AutopilotConfig) withDefaults() AutopilotConfig {
	if c.LastContactThreshold <= 0 {
		c.LastContactThreshold = 200 * time.Millisecond
	}
	if c.MaxTrailingLogs == 0 {
		c.MaxTrailingLogs = 250
	}
	if c.ServerStabilizationTime <= 0 {
		c.ServerStabilizationTime = 10 * time.Second
	}
	if c.DeadServerLastContactThreshold <= 0 {
		c.DeadServerLastContactThreshold = 24 * time.Hour
	}
	if c.UpdateInterval <= 0 {
		c.UpdateInterval = 2 * time.Second
	}
	if c.ReconcileInterval <= 0 {
		c.ReconcileInterval = 10 * time.Second
	}
	return c
}

// PeerStats is a server's own account of its raft log, which the leader's
// autopilot fetches from every server to judge its health.
type PeerStats struct {
	// ID is the answering server's raft id; a mismatch counts as no answer.
	ID string
	// Name is its node name.
	Name string
	// LastContact is the time since it last heard from the leader.
	LastContact time.Duration
	// LastTerm and LastIndex are its raft log's last term and index.
	LastTerm  uint64
	LastIndex uint64
}

// StatsFetcher asks the server with raft id id (raft address addr) for its
// PeerStats; the agent calls the server's API.
type StatsFetcher func(ctx context.Context, id, addr string) (PeerStats, error)

// ServerHealth is one server's health as the leader's autopilot judges it:
// Nomad's ServerHealth (GET /v1/operator/autopilot/health).
type ServerHealth struct {
	ID      string
	Name    string
	Address string
	// SerfStatus is "alive" when the server answered the last health
	// check, "failed" otherwise (ordo has no serf; the name is Nomad's).
	SerfStatus string
	// Status is the server's raft role: leader, voter or non-voter.
	Status  string
	Version string
	Leader  bool
	Voter   bool
	Healthy bool
	// LastContact is the time since the server last heard from the leader
	// (since the leader last heard from it when it does not answer), as a
	// Go duration string.
	LastContact string
	LastTerm    uint64
	LastIndex   uint64
	// StableSince is when Healthy last changed.
	StableSince time.Time
}

// AutopilotHealth is the cluster's health: Nomad's OperatorHealthReply.
type AutopilotHealth struct {
	// Healthy is true when every server is healthy.
	Healthy bool
	// FailureTolerance is how many voters could fail without losing quorum.
	FailureTolerance int
	Servers          []ServerHealth
	// Leader is the leader's raft id; Voters the voters' ids.
	Leader string
	Voters []string
}

// pilot is the Node's autopilot and the delegate it asks about servers.
type pilot struct {
	n   *Node
	cfg AutopilotConfig
	ap  *autopilot.Autopilot
	log *slog.Logger

	healthy   prometheus.Gauge
	tolerance prometheus.Gauge
	reg       prometheus.Registerer

	// removals are dead-server removals started by RemoveFailedServer.
	removals sync.WaitGroup

	mu struct {
		sync.Mutex
		// source, when set, gives the run-time settings (SetAutopilotSource).
		source func() (AutopilotConfig, bool)
		// peers is what the leader has heard from each server.
		peers map[raft.ServerID]*peerSeen
	}
}

// peerSeen is what the leader knows of one server's answers.
type peerSeen struct {
	first  time.Time // when this leader first tracked the server
	last   time.Time // its last answer; zero when none
	failed bool      // its last health check got no answer
	stats  autopilot.ServerStats
	name   string
	// judged, healthy and role are autopilot's last verdict, for logging
	// changes.
	judged  bool
	healthy bool
	role    autopilot.RaftState
}

var _ autopilot.ApplicationIntegration = (*pilot)(nil)
var _ autopilot.Raft = (*raft.Raft)(nil)

func newPilot(n *Node, cfg AutopilotConfig, log *slog.Logger, reg prometheus.Registerer, hlog hclog.Logger) *pilot {
	p := &pilot{n: n, cfg: cfg.withDefaults(), log: log, reg: reg,
		healthy: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_autopilot_healthy",
			Help: "1 when autopilot judges every server healthy, on the leader."}),
		tolerance: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_autopilot_failure_tolerance",
			Help: "How many voters could fail without losing quorum, on the leader."}),
	}
	p.mu.peers = map[raft.ServerID]*peerSeen{}
	if reg != nil {
		reg.MustRegister(p.healthy, p.tolerance)
	}
	p.ap = autopilot.New(n.raft, p, autopilot.WithLogger(hlog),
		autopilot.WithUpdateInterval(p.cfg.UpdateInterval), autopilot.WithReconcileInterval(p.cfg.ReconcileInterval))
	return p
}

func (p *pilot) close() {
	if p.reg != nil {
		p.reg.Unregister(p.healthy)
		p.reg.Unregister(p.tolerance)
	}
}

// RunAutopilot runs autopilot until ctx ends; the agent runs it on the
// leader only (a leader-only processor). It promotes caught-up, stable
// non-voters, tracks every server's health and, when configured, removes
// dead servers.
func (n *Node) RunAutopilot(ctx context.Context) error {
	p := n.pilot
	p.mu.Lock()
	p.mu.peers = map[raft.ServerID]*peerSeen{} // what a past term heard is stale
	p.mu.Unlock()
	p.ap.Start(ctx)
	<-ctx.Done()
	<-p.ap.Stop()
	p.removals.Wait()
	// The gauges describe the cluster only on its leader.
	p.healthy.Set(0)
	p.tolerance.Set(0)
	return ctx.Err()
}

// AutopilotConfig returns the autopilot configuration in effect.
func (n *Node) AutopilotConfig() AutopilotConfig { return n.pilot.effective() }

// SetAutopilotSource makes f the source of the settings an operator may
// change at run time (the log's, from PUT
// /v1/operator/autopilot/configuration): while f reports ok, its
// dead-server cleanup, health thresholds, minimum quorum and
// stabilization time replace the node's own (zero durations and
// MaxTrailingLogs take their defaults); the dead-server threshold and the
// intervals stay as the node started with. Every server reads the same
// log, so a new leader keeps what the last one was told. f is called at
// every health check and must be cheap.
func (n *Node) SetAutopilotSource(f func() (AutopilotConfig, bool)) {
	p := n.pilot
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.source = f
}

// effective returns the configuration in effect: the node's, with the
// source's run-time settings when it has some.
func (p *pilot) effective() AutopilotConfig {
	p.mu.Lock()
	cfg, src := p.cfg, p.mu.source
	p.mu.Unlock()
	if src == nil {
		return cfg
	}
	c, ok := src()
	if !ok {
		return cfg
	}
	c.DeadServerLastContactThreshold = cfg.DeadServerLastContactThreshold
	c.UpdateInterval, c.ReconcileInterval = cfg.UpdateInterval, cfg.ReconcileInterval
	return c.withDefaults()
}

// AutopilotConfig implements autopilot.ApplicationIntegration.
func (p *pilot) AutopilotConfig() *autopilot.Config {
	c := p.effective()
	return &autopilot.Config{
		CleanupDeadServers:      c.CleanupDeadServers,
		LastContactThreshold:    c.LastContactThreshold,
		MaxTrailingLogs:         c.MaxTrailingLogs,
		MinQuorum:               c.MinQuorum,
		ServerStabilizationTime: c.ServerStabilizationTime,
	}
}

// NotifyState implements autopilot.ApplicationIntegration: it sets the
// gauges and logs each server whose health or role changed. Autopilot
// calls it holding its state lock, so it must not call back into it.
func (p *pilot) NotifyState(s *autopilot.State) {
	if s.Healthy {
		p.healthy.Set(1)
	} else {
		p.healthy.Set(0)
	}
	p.tolerance.Set(float64(s.FailureTolerance))
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, srv := range s.Servers {
		seen := p.seenLocked(id, time.Now())
		if seen.judged && (seen.healthy != srv.Health.Healthy || seen.role != srv.State) {
			p.log.Info("autopilot: server changed", "peer", string(id), "healthy", srv.Health.Healthy,
				"role", string(srv.State), "was", string(seen.role), "last_index", srv.Stats.LastIndex,
				"last_contact", srv.Stats.LastContact)
		}
		seen.judged, seen.healthy, seen.role = true, srv.Health.Healthy, srv.State
	}
}

// KnownServers implements autopilot.ApplicationIntegration: every server
// in the raft configuration. A server counts as failed once it has not
// answered for DeadServerLastContactThreshold, which only matters to
// CleanupDeadServers.
func (p *pilot) KnownServers() map[raft.ServerID]*autopilot.Server {
	f := p.n.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	_, leaderID := p.n.raft.LeaderWithID()
	now := time.Now()
	out := map[raft.ServerID]*autopilot.Server{}
	p.mu.Lock()
	defer p.mu.Unlock()
	inConfig := map[raft.ServerID]bool{}
	for _, s := range f.Configuration().Servers {
		inConfig[s.ID] = true
		seen := p.seenLocked(s.ID, now)
		status := autopilot.NodeAlive
		if s.ID != raft.ServerID(p.n.cfg.ID) {
			since := seen.last
			if since.IsZero() {
				since = seen.first
			}
			if now.Sub(since) > p.cfg.DeadServerLastContactThreshold {
				status = autopilot.NodeFailed
			}
		}
		name := seen.name
		if name == "" {
			name = string(s.ID)
		}
		// Every server may vote (the default promoter's one node type);
		// dead-server cleanup counts potential voters by it.
		out[s.ID] = &autopilot.Server{ID: s.ID, Name: name, Address: s.Address, NodeStatus: status,
			RaftVersion: raft.ProtocolVersionMax, IsLeader: s.ID == leaderID, NodeType: autopilot.NodeVoter}
	}
	for id := range p.mu.peers {
		if !inConfig[id] {
			delete(p.mu.peers, id)
		}
	}
	return out
}

func (p *pilot) seenLocked(id raft.ServerID, now time.Time) *peerSeen {
	s := p.mu.peers[id]
	if s == nil {
		s = &peerSeen{first: now}
		p.mu.peers[id] = s
	}
	return s
}

// FetchServerStats implements autopilot.ApplicationIntegration: this
// server's stats from raft, every other server's from its API, in
// parallel. A server that does not answer keeps its last term and index
// and its LastContact becomes the time since it last answered, so it
// turns unhealthy.
func (p *pilot) FetchServerStats(ctx context.Context, servers map[raft.ServerID]*autopilot.Server) map[raft.ServerID]*autopilot.ServerStats {
	threshold := p.effective().LastContactThreshold
	type answer struct {
		id    raft.ServerID
		stats PeerStats
		err   error
	}
	answers := make(chan answer, len(servers))
	var wg sync.WaitGroup
	for id, srv := range servers {
		if id == raft.ServerID(p.n.cfg.ID) {
			answers <- answer{id: id, stats: p.n.LocalStats()}
			continue
		}
		if p.n.cfg.PeerStats == nil {
			answers <- answer{id: id, err: errors.New("no stats fetcher configured")}
			continue
		}
		wg.Go(func() {
			st, err := p.n.cfg.PeerStats(ctx, string(id), string(srv.Address))
			if err == nil && st.ID != string(id) {
				err = fmt.Errorf("answered as server %q", st.ID)
			}
			answers <- answer{id: id, stats: st, err: err}
		})
	}
	wg.Wait()
	close(answers)
	now := time.Now()
	out := map[raft.ServerID]*autopilot.ServerStats{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for a := range answers {
		seen := p.seenLocked(a.id, now)
		if a.err == nil {
			if seen.failed {
				p.log.Info("autopilot: server answers again", "peer", string(a.id))
			}
			seen.last, seen.failed, seen.name = now, false, a.stats.Name
			seen.stats = autopilot.ServerStats{LastContact: a.stats.LastContact, LastTerm: a.stats.LastTerm, LastIndex: a.stats.LastIndex}
		} else {
			if !seen.failed {
				p.log.Warn("autopilot: server does not answer its health check", "peer", string(a.id), "err", a.err)
			}
			seen.failed = true
			since := seen.last
			if since.IsZero() {
				since = seen.first
			}
			// At least the threshold, so a server that never answered is
			// unhealthy from the first check.
			seen.stats.LastContact = max(now.Sub(since), threshold+time.Nanosecond)
		}
		st := seen.stats
		out[a.id] = &st
	}
	return out
}

// RemoveFailedServer implements autopilot.ApplicationIntegration: with
// CleanupDeadServers, autopilot asks to remove a dead server; the removal
// still goes through RemovePeer's quorum check.
func (p *pilot) RemoveFailedServer(s *autopilot.Server) {
	p.removals.Go(func() {
		p.log.Warn("autopilot: removing dead server", "peer", string(s.ID), "address", string(s.Address))
		if err := p.n.RemovePeer(string(s.ID)); err != nil {
			p.log.Warn("autopilot: dead server not removed", "peer", string(s.ID), "err", err)
		}
	})
}

// LocalStats returns this server's PeerStats.
func (n *Node) LocalStats() PeerStats {
	st := PeerStats{ID: n.cfg.ID, LastIndex: n.raft.LastIndex()}
	st.LastTerm, _ = strconv.ParseUint(n.raft.Stats()["last_log_term"], 10, 64)
	if n.raft.State() != raft.Leader {
		last := n.raft.LastContact()
		if last.IsZero() {
			st.LastContact = -1
		} else {
			st.LastContact = time.Since(last)
		}
	}
	return st
}

// AutopilotHealth returns the leader's view of every server's health;
// ErrNotLeader elsewhere.
func (n *Node) AutopilotHealth() (AutopilotHealth, error) {
	if !n.IsLeader() {
		return AutopilotHealth{}, ErrNotLeader
	}
	p := n.pilot
	s := p.ap.GetState()
	out := AutopilotHealth{Healthy: s.Healthy, FailureTolerance: s.FailureTolerance, Leader: string(s.Leader), Servers: []ServerHealth{}}
	for _, v := range s.Voters {
		out.Voters = append(out.Voters, string(v))
	}
	if len(s.Servers) == 0 { // autopilot has not looked yet
		out.Healthy = false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, srv := range s.Servers {
		serf := "alive"
		if seen := p.mu.peers[id]; seen != nil && seen.failed {
			serf = "failed"
		}
		out.Servers = append(out.Servers, ServerHealth{ID: string(id), Name: srv.Server.Name, Address: string(srv.Server.Address),
			SerfStatus: serf, Status: string(srv.State), Version: srv.Server.Version, Leader: srv.State == autopilot.RaftLeader,
			Voter: srv.HasVotingRights(), Healthy: srv.Health.Healthy, LastContact: srv.Stats.LastContact.String(),
			LastTerm: srv.Stats.LastTerm, LastIndex: srv.Stats.LastIndex, StableSince: srv.Health.StableSince})
	}
	slices.SortFunc(out.Servers, func(a, b ServerHealth) int {
		if a.Leader != b.Leader {
			if a.Leader {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// judgedHealthy reports whether autopilot last judged id healthy; this
// server, leading, always is. A server autopilot has not judged is not.
func (n *Node) judgedHealthy(id raft.ServerID) bool {
	if id == raft.ServerID(n.cfg.ID) {
		return true
	}
	h := n.pilot.ap.GetServerHealth(id)
	return h != nil && h.Healthy
}

// checkRemoval says why taking id's vote away from the configuration c
// could leave the cluster without a quorum, or returns nil: the voters
// left must include a healthy quorum of themselves, and at least one.
func checkRemoval(c raft.Configuration, id raft.ServerID, healthy func(raft.ServerID) bool) error {
	idx := slices.IndexFunc(c.Servers, func(s raft.Server) bool { return s.ID == id })
	if idx < 0 {
		return fmt.Errorf("%w: %s", ErrUnknownPeer, id)
	}
	if c.Servers[idx].Suffrage != raft.Voter {
		return nil
	}
	var left, unhealthy []string
	ok := 0
	for _, s := range c.Servers {
		if s.ID == id || s.Suffrage != raft.Voter {
			continue
		}
		left = append(left, string(s.ID))
		if healthy(s.ID) {
			ok++
		} else {
			unhealthy = append(unhealthy, string(s.ID))
		}
	}
	if len(left) == 0 {
		return fmt.Errorf("%w: %s is the last voter", ErrUnsafeChange, id)
	}
	if need := len(left)/2 + 1; ok < need {
		return fmt.Errorf("%w: without %s, %d voters would remain and need %d healthy for a quorum, but only %d are (unhealthy: %v; see GET /v1/operator/autopilot/health)",
			ErrUnsafeChange, id, len(left), need, ok, unhealthy)
	}
	return nil
}

// configuration returns the latest raft configuration; leader only.
func (n *Node) configuration() (raft.Configuration, error) {
	if !n.IsLeader() {
		return raft.Configuration{}, ErrNotLeader
	}
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raft.Configuration{}, mapErr(err)
	}
	return f.Configuration(), nil
}

// RemovePeer removes server id from the raft configuration, refusing
// (ErrUnsafeChange) when the voters left would not hold a healthy quorum,
// when id is the last voter, and ErrUnknownPeer when id is not a member;
// leader only. A leader may remove itself under the same rule; it then
// steps down.
func (n *Node) RemovePeer(id string) error {
	n.membership.Lock()
	defer n.membership.Unlock()
	c, err := n.configuration()
	if err != nil {
		return err
	}
	if err := checkRemoval(c, raft.ServerID(id), n.judgedHealthy); err != nil {
		return err
	}
	n.pilot.log.Info("removing server from the raft configuration", "peer", id)
	if err := n.raft.RemoveServer(raft.ServerID(id), 0, 30*time.Second).Error(); err != nil {
		return fmt.Errorf("remove %s: %w", id, mapErr(err))
	}
	return nil
}

// AddNonvoter admits server id at raft address addr as a non-voter, which
// changes no quorum; autopilot promotes it to voter once it has caught up
// and stayed healthy for ServerStabilizationTime. A member with the same
// id and address is left as it is; a member whose address changed is
// removed (under RemovePeer's quorum rule) and added back as a non-voter.
// An address that another member holds, or a new address for this
// leader, is refused with ErrPeerConflict. Leader only.
func (n *Node) AddNonvoter(id, addr string) (added bool, err error) {
	n.membership.Lock()
	defer n.membership.Unlock()
	c, err := n.configuration()
	if err != nil {
		return false, err
	}
	for _, s := range c.Servers {
		switch {
		case string(s.ID) == id && string(s.Address) == addr:
			return false, nil
		case string(s.ID) == id && id == n.cfg.ID:
			return false, fmt.Errorf("%w: %s is this leader, at %s; its address cannot change to %s while it leads", ErrPeerConflict, id, s.Address, addr)
		case string(s.ID) == id:
			if err := checkRemoval(c, s.ID, n.judgedHealthy); err != nil {
				return false, fmt.Errorf("re-add %s at its new address %s: %w", id, addr, err)
			}
			n.pilot.log.Info("server changed address: re-adding it as a non-voter", "peer", id, "old", string(s.Address), "new", addr)
			if err := n.raft.RemoveServer(s.ID, 0, 30*time.Second).Error(); err != nil {
				return false, fmt.Errorf("remove %s before re-adding it: %w", id, mapErr(err))
			}
		case string(s.Address) == addr:
			return false, fmt.Errorf("%w: %s is server %s's raft address; remove that server first (ordo operator raft remove-peer -peer-id %s)",
				ErrPeerConflict, addr, s.ID, s.ID)
		}
	}
	n.pilot.log.Info("adding non-voter", "peer", id, "raft", addr)
	if err := n.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 30*time.Second).Error(); err != nil {
		return false, fmt.Errorf("add non-voter %s: %w", id, mapErr(err))
	}
	return true, nil
}

// TransferLeadership hands leadership to voter id, or to the most
// up-to-date other voter when id is empty, and waits until this server
// has stepped down and (for up to two election timeouts) knows the new
// leader; leader only. It refuses when there is no other voter.
func (n *Node) TransferLeadership(id string) error {
	n.membership.Lock()
	defer n.membership.Unlock()
	c, err := n.configuration()
	if err != nil {
		return err
	}
	var target *raft.Server
	others := 0
	for i, s := range c.Servers {
		if s.Suffrage != raft.Voter || string(s.ID) == n.cfg.ID {
			continue
		}
		others++
		if string(s.ID) == id {
			target = &c.Servers[i]
		}
	}
	switch {
	case others == 0:
		return fmt.Errorf("%w: no other voter to hand leadership to", ErrPeerConflict)
	case id == n.cfg.ID:
		return fmt.Errorf("%w: %s already leads", ErrPeerConflict, id)
	case id != "" && target == nil:
		if slices.ContainsFunc(c.Servers, func(s raft.Server) bool { return string(s.ID) == id }) {
			return fmt.Errorf("%w: %s is not a voter", ErrPeerConflict, id)
		}
		return fmt.Errorf("%w: %s", ErrUnknownPeer, id)
	}
	var f raft.Future
	if target != nil {
		f = n.raft.LeadershipTransferToServer(target.ID, target.Address)
	} else {
		f = n.raft.LeadershipTransfer()
	}
	if err := f.Error(); err != nil {
		return fmt.Errorf("transfer leadership: %w", mapErr(err))
	}
	// This server has stepped down; wait (boundedly) until it has heard
	// from the new leader, so callers can say who leads.
	deadline := time.Now().Add(2 * n.cfg.ElectionTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if leader, _ := n.Leader(); leader != "" && leader != n.cfg.ID {
			break
		}
		select {
		case <-tick.C:
		case <-n.shutdown:
			return nil
		}
	}
	return nil
}
