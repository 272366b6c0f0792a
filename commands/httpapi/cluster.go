package httpapi

import (
	"cmp"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/servers"
)

// clusterRoutes are Nomad's agent, region and operator routes that
// describe and tune the whole cluster: members and regions (here), node
// pools (nodepools.go), the scheduler and autopilot configurations
// (schedconfig.go), search (search.go) and summary reconciliation.
func (s *Server) clusterRoutes() {
	s.handle("GET /v1/agent/members", endpoint(s.agentMembers))
	s.handle("GET /v1/agent/servers", endpoint(s.agentServers))
	s.handle("GET /v1/regions", endpoint(s.regions))
	s.handle("PUT /v1/system/reconcile/summaries", s.leader(endpoint(s.reconcileSummaries)))
	s.nodePoolRoutes()
	s.schedulerConfigRoutes()
	s.searchRoutes()
}

// region is the agent's region, "global" unless configured.
func (s *Server) region() string { return cmp.Or(s.cfg.Self.Region, "global") }

// datacenter is the agent's datacenter, "dc1" unless configured.
func (s *Server) datacenter() string { return cmp.Or(s.cfg.Self.Datacenter, "dc1") }

// agentMembers serves GET /v1/agent/members: Nomad's ServerMembers, one
// member per server of the raft configuration, from this agent's view.
// A server the leader's autopilot has not heard from is "failed"; on a
// follower, every server in the configuration is "alive".
func (s *Server) agentMembers(w http.ResponseWriter, _ *http.Request) error {
	list, err := s.node.Servers()
	if err != nil {
		return err
	}
	httpAddrs := map[string]string{s.cfg.Self.ID: s.cfg.Self.HTTPAddr}
	if regs, err := servers.List(projections.NewView(s.cfg.FSM.Store())); err == nil {
		for _, sv := range regs {
			if sv.HTTPAddr != "" {
				httpAddrs[sv.ID] = sv.HTTPAddr
			}
		}
	}
	failed := map[string]bool{}
	if s.cfg.Node != nil && s.node.IsLeader() {
		if h, err := s.cfg.Node.AutopilotHealth(); err == nil {
			for _, sv := range h.Servers {
				failed[sv.ID] = sv.SerfStatus == "failed"
			}
		}
	}
	leaderID, _ := s.node.Leader()
	out := api.ServerMembers{ServerName: s.cfg.Self.Name, ServerRegion: s.region(), ServerDC: s.datacenter(),
		Members: []*api.AgentMember{}}
	for _, sv := range list {
		m := s.member(sv.ID, httpAddrs[sv.ID], sv.Address, sv.ID == leaderID, sv.Voter)
		if failed[sv.ID] {
			m.Status = "failed"
		}
		out.Members = append(out.Members, m)
	}
	slices.SortFunc(out.Members, func(a, b *api.AgentMember) int { return cmp.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, out)
	return nil
}

// member is one server as Nomad's AgentMember: Addr and Port its HTTP
// address, the raft id and address, role and leadership in Tags.
func (s *Server) member(id, httpAddr, raftAddr string, leader, voter bool) *api.AgentMember {
	m := &api.AgentMember{Name: id + "." + s.region(), Addr: httpAddr, Status: "alive",
		ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4,
		Tags: map[string]string{"role": "nomad", "region": s.region(), "dc": s.datacenter(), "id": id,
			"raft_addr": raftAddr, "raft_vsn": "3", "leader": strconv.FormatBool(leader), "voter": strconv.FormatBool(voter)}}
	if id == s.cfg.Self.ID {
		m.Tags["build"] = s.cfg.Self.Version
	}
	if host, port, err := net.SplitHostPort(httpAddr); err == nil {
		m.Addr = host
		p, _ := strconv.ParseUint(port, 10, 16)
		m.Port = uint16(p)
		m.Tags["port"] = port
	}
	return m
}

// agentServers serves GET /v1/agent/servers: the HTTP addresses
// ("host:port") of the cluster's servers, as a client would use them.
func (s *Server) agentServers(w http.ResponseWriter, _ *http.Request) error {
	addrs := []string{}
	if regs, err := servers.List(projections.NewView(s.cfg.FSM.Store())); err == nil {
		for _, sv := range regs {
			if sv.HTTPAddr != "" {
				addrs = append(addrs, sv.HTTPAddr)
			}
		}
	}
	if len(addrs) == 0 && s.cfg.Self.HTTPAddr != "" {
		addrs = append(addrs, s.cfg.Self.HTTPAddr)
	}
	slices.Sort(addrs)
	writeJSON(w, http.StatusOK, slices.Compact(addrs))
	return nil
}

// regions serves GET /v1/regions: the one region ordo runs.
func (s *Server) regions(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, []string{s.region()})
	return nil
}

// reconcileSummaries serves PUT /v1/system/reconcile/summaries. Nomad
// recomputes job summaries that drifted from the allocations; ordo's are
// a projection of the log, derived from the same events as the
// allocations, so they cannot drift: the answer is the applied index the
// summaries reflect (`ordo operator projections verify` checks them
// against a replay).
func (s *Server) reconcileSummaries(w http.ResponseWriter, _ *http.Request) error {
	setIndex(w, s.cfg.FSM.Applied())
	writeJSON(w, http.StatusOK, map[string]any{"Index": s.cfg.FSM.Applied()})
	return nil
}

// selfConfig is the agent's configuration as /v1/agent/self shows it:
// Config as JSON, with Nomad's Region, Datacenter and NodeName when it
// does not set them.
func (s *Server) selfConfig() map[string]any {
	out := map[string]any{}
	if raw, err := json.Marshal(s.cfg.Self.Config); err == nil {
		_ = json.Unmarshal(raw, &out)
	}
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range map[string]string{"Region": s.region(), "Datacenter": s.datacenter(), "NodeName": s.cfg.Self.Name} {
		if cur, _ := out[k].(string); cur == "" {
			out[k] = v
		}
	}
	return out
}
