package httpapi

import (
	"net/http"
	"strconv"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
)

func (s *Server) statusLeader(w http.ResponseWriter, _ *http.Request) error {
	_, addr := s.node.Leader()
	writeJSON(w, http.StatusOK, addr)
	return nil
}

func (s *Server) statusPeers(w http.ResponseWriter, _ *http.Request) error {
	servers, err := s.node.Servers()
	if err != nil {
		return err
	}
	peers := []string{}
	for _, sv := range servers {
		if sv.Voter {
			peers = append(peers, sv.Address)
		}
	}
	writeJSON(w, http.StatusOK, peers)
	return nil
}

func (s *Server) raftConfiguration(w http.ResponseWriter, _ *http.Request) error {
	servers, err := s.node.Servers()
	if err != nil {
		return err
	}
	leaderID, _ := s.node.Leader()
	out := api.RaftConfiguration{Index: s.cfg.FSM.Applied()}
	for _, sv := range servers {
		out.Servers = append(out.Servers, api.RaftServer{ID: sv.ID, Node: sv.ID, Address: sv.Address,
			Leader: sv.ID == leaderID, Voter: sv.Voter, RaftProtocol: "3"})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) agentSelf(w http.ResponseWriter, _ *http.Request) error {
	leaderID, leaderAddr := s.node.Leader()
	writeJSON(w, http.StatusOK, map[string]any{
		// cluster.go: config with Region, Datacenter and NodeName as Nomad's; member.
		"config": s.selfConfig(),
		"member": s.member(s.cfg.Self.ID, s.cfg.Self.HTTPAddr, s.cfg.Self.RaftAddr, leaderID == s.cfg.Self.ID, true),
		// Nomad's stats are maps of strings, which its client insists on.
		"stats": map[string]map[string]string{
			"raft": s.node.Stats(),
			"ordo": {
				"leader": strconv.FormatBool(s.node.IsLeader()), "leader_id": leaderID, "leader_addr": leaderAddr,
				"applied_index": strconv.FormatUint(s.cfg.FSM.Applied(), 10), "version": s.cfg.Self.Version,
				"dev": strconv.FormatBool(s.cfg.Self.Dev),
			},
		},
	})
	return nil
}

// agentHealth answers 200 when this server knows a leader, 503 otherwise,
// with the state of each projection (rebuilding ones with their progress).
func (s *Server) agentHealth(w http.ResponseWriter, _ *http.Request) error {
	id, _ := s.node.Leader()
	ok := id != ""
	body := map[string]any{"server": map[string]any{"ok": ok, "message": "ok"}}
	if s.cfg.Rebuilds != nil {
		if ph, err := projectionHealth(s.cfg.Rebuilds); err == nil {
			body["projections"] = ph // projections.go: rebuilds in progress
		}
	}
	if h := s.cfg.FSM.Halt(); h != nil { // projections/halt.go: this build cannot apply the log
		body["server"] = map[string]any{"ok": false, "message": h.Error()}
		body["fsm"] = map[string]any{"halted": true, "index": h.Index, "build": h.Build, "reason": h.Err.Error()}
		writeJSON(w, http.StatusServiceUnavailable, body)
		return nil
	}
	if !ok {
		body["server"] = map[string]any{"ok": false, "message": commands.ErrNoLeader.Error()}
		writeJSON(w, http.StatusServiceUnavailable, body)
		return nil
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}
