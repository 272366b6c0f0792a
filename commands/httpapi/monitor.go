package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/logtee"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/servers"
)

// monitorRoutes serves GET /v1/agent/monitor, Nomad's agent monitor:
// this server's log lines as they are written, or, with ?node_id, the
// client agent's (proxied as the client routes are), or, with
// ?server_id, another server's (forwarded to it).
func (s *Server) monitorRoutes() {
	s.handle("GET /v1/agent/monitor", endpoint(s.agentMonitor))
}

// agentMonitor is GET /v1/agent/monitor?log_level=&log_json=&plain=
// &node_id=&server_id=.
func (s *Server) agentMonitor(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req, err := logtee.ParseRequest(q)
	if pe, ok := errors.AsType[*logtee.ParamError](err); ok {
		return commands.Invalid(pe.Field, "%s", pe.Reason)
	}
	nodeID, serverID := q.Get("node_id"), q.Get("server_id")
	switch {
	case nodeID != "" && serverID != "":
		return commands.Invalid("node_id", "name a node or a server (server_id), not both")
	case nodeID != "":
		return s.nodeProxy("/v1/agent/monitor")(w, r) // clientroutes.go
	case serverID != "":
		addr, self, err := s.monitorTarget(serverID)
		if ne, ok := errors.AsType[*nodeUnavailableError](err); ok {
			writeNodeError(w, ne)
			return nil
		}
		if err != nil {
			return err
		}
		if !self {
			if by := r.Header.Get(forwardedHeader); by != "" {
				return fmt.Errorf("server_id %s: forwarded by %s to a server that is not it", serverID, by)
			}
			s.fwd.forwardTo(w, r, addr, func(w http.ResponseWriter, err error) {
				writeNodeError(w, &nodeUnavailableError{http.StatusBadGateway,
					fmt.Sprintf("server %s at %s: %v", serverID, addr, err)})
			})
			return nil
		}
	}
	if s.cfg.Monitor == nil {
		return notImplemented{fmt.Errorf("this server was built without an agent monitor")}
	}
	s.cfg.Monitor.Serve(w, r, req, s.cfg.StreamHeartbeat)
	return nil
}

// monitorTarget resolves a server_id as Nomad's monitor does: "leader",
// a server's raft id, or its member name (<id>.<region>, as
// /v1/agent/members lists it). It returns the server's HTTP address and
// whether it is this server.
func (s *Server) monitorTarget(id string) (addr string, self bool, err error) {
	if id == "leader" {
		if id, _ = s.node.Leader(); id == "" {
			return "", false, commands.ErrNoLeader
		}
	}
	id = strings.TrimSuffix(id, "."+s.region())
	if id == s.cfg.Self.ID {
		return s.cfg.Self.HTTPAddr, true, nil
	}
	sv, err := servers.Get(projections.NewView(s.cfg.FSM.Store()), id)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		return "", false, &commands.NotFoundError{Kind: "server", ID: id}
	case err != nil:
		return "", false, err
	case sv.HTTPAddr == "":
		return "", false, &nodeUnavailableError{http.StatusBadGateway, fmt.Sprintf("server %s advertises no HTTP address", id)}
	}
	return sv.HTTPAddr, false, nil
}
