package httpapi

import (
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
	"github.com/ordoplane/ordo/logtee"
)

// monitorRoute serves GET /v1/agent/monitor when Config.Monitor is set:
// the client agent's own log lines as they are written, which a server
// proxies to for ?node_id (the server checked the caller's agent:read).
// node_id and server_id name this agent by then and are not read.
func (s *Server) monitorRoute() {
	if s.cfg.Monitor == nil {
		return
	}
	wt := s.cfg.Limits.WithDefaults().WriteTimeout
	s.mux.HandleFunc("GET /v1/agent/monitor", func(w http.ResponseWriter, r *http.Request) {
		req, err := logtee.ParseRequest(r.URL.Query())
		if pe, ok := errors.AsType[*logtee.ParamError](err); ok {
			writeError(w, invalid(pe.Field, "%s", pe.Reason))
			return
		}
		s.cfg.Monitor.Serve(httplimit.Rolling(w, wt), r, req, s.cfg.HeartbeatInterval) // as long as the reader reads
	})
}
