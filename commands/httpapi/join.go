package httpapi

import (
	"net/http"

	"github.com/ordoplane/ordo/commands"
)

// join serves PUT /v1/operator/raft/join: a server announcing itself. The
// agent's Join hook records it, adds it as a voter when this server leads,
// and returns the servers this one knows.
func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	// A follower that knows the leader hands the join to it, so the leader
	// admits the server; before there is a leader, joins are answered here.
	if !s.node.IsLeader() && r.Header.Get(forwardedHeader) == "" {
		if _, err := s.fwd.leaderHTTP(); err == nil {
			s.fwd.forward(w, r)
			return
		}
	}
	var req JoinRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &req); err != nil {
		writeError(w, err)
		return
	}
	switch {
	case req.ID == "":
		writeError(w, commands.Invalid("ID", "required"))
		return
	case req.RaftAddr == "":
		writeError(w, commands.Invalid("RaftAddr", "required"))
		return
	case req.HTTPAddr == "":
		writeError(w, commands.Invalid("HTTPAddr", "required"))
		return
	}
	if s.cfg.Join == nil {
		writeError(w, commands.Invalid("ID", "this agent does not take joins"))
		return
	}
	resp, err := s.cfg.Join(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
