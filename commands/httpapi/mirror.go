package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/storage/kv"
)

// Mirror is the Kafka mirror as the API sees it (processors/mirror, wired
// by the agent).
type Mirror interface {
	// Status reports the mirror's state (GET /v1/operator/mirror).
	Status(ctx context.Context) any
	// Verify reads the topic back and checks it against the archive in r
	// from index from on; ok reports no finding.
	Verify(ctx context.Context, r kv.Reader, from uint64) (report any, ok bool, err error)
}

// mirrorDisabled is the status of a server without a mirror block.
type mirrorDisabled struct{ Enabled bool }

// mirrorRoutes serves the mirror's endpoints, on the leader (which runs it):
//
//	GET  /v1/operator/mirror               status: enabled, brokers reachable, topic, last mirrored index, lag
//	POST /v1/operator/mirror/verify?from=  read the topic back and check it against the archive; the report
func (s *Server) mirrorRoutes() {
	s.handle("GET /v1/operator/mirror", s.leaderOnly(endpoint(s.mirrorStatus)))
	s.handle("POST /v1/operator/mirror/verify", s.leader(endpoint(s.mirrorVerify)))
	s.handle("PUT /v1/operator/mirror/verify", s.leader(endpoint(s.mirrorVerify)))
}

func (s *Server) mirrorStatus(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Mirror == nil {
		writeJSON(w, http.StatusOK, mirrorDisabled{})
		return nil
	}
	writeJSON(w, http.StatusOK, s.cfg.Mirror.Status(r.Context()))
	return nil
}

func (s *Server) mirrorVerify(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Mirror == nil {
		return commands.Invalid("mirror", "no mirror block in this server's configuration")
	}
	var from uint64
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return commands.Invalid("from", "%q is not a non-negative integer", v)
		}
		from = n
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	rep, _, err := s.cfg.Mirror.Verify(r.Context(), snap, from)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}
