package httpapi

import (
	"net/http"

	"github.com/ordoplane/ordo/commands"
)

// join serves PUT /v1/operator/raft/join: a server announcing itself. The
// agent's Join hook records it, adds it as a voter when this server leads,
// and returns the servers this one knows.
func (s *Server) join(w http.ResponseWriter, r *http.Request) error {
	// A follower that knows the leader hands the join to it, so the leader
	// admits the server; before there is a leader, joins are answered here.
	if !s.node.IsLeader() && r.Header.Get(forwardedHeader) == "" {
		if _, err := s.fwd.leaderHTTP(); err == nil {
			s.fwd.forward(w, r)
			return nil
		}
	}
	var req JoinRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &req); err != nil {
		return err
	}
	switch {
	case req.ID == "":
		return commands.Invalid("ID", "required")
	case req.RaftAddr == "":
		return commands.Invalid("RaftAddr", "required")
	case req.HTTPAddr == "":
		return commands.Invalid("HTTPAddr", "required")
	}
	if s.cfg.Join == nil {
		return commands.Invalid("ID", "this agent does not take joins")
	}
	resp, err := s.cfg.Join(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
