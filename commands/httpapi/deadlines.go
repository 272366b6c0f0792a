package httpapi

import (
	"net/http"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
)

// HTTPLimits bounds the API's connections (httplimit.Config): the server
// the agent builds with httplimit.NewServer enforces them, and Server
// extends them for the routes below that must outlast them.
type HTTPLimits = httplimit.Config

// streamRoutes answer for as long as the client reads (the event stream,
// followed logs) or with as many bytes as there are (snapshots, history
// files): each write gets the write timeout from when it starts, instead
// of one deadline for the whole answer.
var streamRoutes = map[string]bool{
	"GET /v1/event/stream":          true,
	"GET /v1/operator/log/stream":   true,
	"GET /v1/client/fs/logs/{id}":   true,
	"GET /v1/client/fs/stream/{id}": true,
	"GET /v1/operator/snapshot":     true,
	"GET /v1/operator/log/export":   true,
	"GET /v1/agent/monitor":         true,
}

// uploadRoutes take bodies that may take longer than one body deadline
// to arrive (a snapshot): each read gets the body timeout from when it
// starts, so the upload must keep moving but may take as long as it needs.
var uploadRoutes = map[string]bool{
	"PUT /v1/operator/snapshot":  true,
	"POST /v1/operator/snapshot": true,
}

// slowRoutes compute their whole answer before writing it, and may take
// longer than the write timeout on a long history: re-running a decision
// rebuilds the state it was taken on. Their write deadline is slowWrite
// past the write timeout.
var slowRoutes = map[string]bool{
	"GET /v1/debug/reschedule/{eval_id}": true,
}

// slowWrite is what slowRoutes add to the write timeout.
const slowWrite = 10 * time.Minute

// deadlines extends the connection deadlines httplimit set for requests
// that legitimately outlast them, before h (and the forwarding to the
// leader, for a follower) runs: a blocking query's write deadline is its
// wait plus the write timeout; streams and uploads roll theirs.
func (s *Server) deadlines(pattern string, h http.Handler) http.Handler {
	lim := s.cfg.Limits.WithDefaults()
	switch {
	case streamRoutes[pattern]:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(httplimit.Rolling(w, lim.WriteTimeout), r)
		})
	case slowRoutes[pattern] && lim.WriteTimeout > 0:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			httplimit.ExtendWrite(w, lim.WriteTimeout+slowWrite)
			h.ServeHTTP(w, r)
		})
	case uploadRoutes[pattern]:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			httplimit.RollingBody(w, r, lim.BodyTimeout)
			h.ServeHTTP(httplimit.Rolling(w, lim.WriteTimeout), r)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && lim.WriteTimeout > 0 && r.URL.Query().Has("index") {
			if bp, err := s.parseBlocking(r); err == nil && bp.index > 0 {
				httplimit.ExtendWrite(w, bp.wait+lim.WriteTimeout)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Unwrap lets net/http's ResponseController reach the connection through
// the metrics' writer (deadlines, flushes).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Unwrap lets net/http's ResponseController reach the connection through
// a historical read's writer.
func (w *historicalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
