package httpapi

import (
	"net/http"

	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
)

// controlRoutes registers the routes beside logs and status: the
// allocation's files (fs.go, fsstream.go), its and the host's statistics (stats.go),
// restart, signal and gc (control.go), and exec (exec.go).
func (s *Server) controlRoutes() {
	s.mux.HandleFunc("GET /v1/client/fs/ls/{alloc_id}", s.fsList)
	s.mux.HandleFunc("GET /v1/client/fs/stat/{alloc_id}", s.fsStat)
	s.mux.HandleFunc("GET /v1/client/fs/cat/{alloc_id}", s.fsCat)
	s.mux.HandleFunc("GET /v1/client/fs/readat/{alloc_id}", s.fsCat)
	s.mux.HandleFunc("GET /v1/client/fs/stream/{alloc_id}", func(w http.ResponseWriter, r *http.Request) {
		s.fsStream(httplimit.Rolling(w, s.cfg.Limits.WithDefaults().WriteTimeout), r) // fsstream.go: as long as the reader reads
	})
	s.mux.HandleFunc("GET /v1/client/allocation/{alloc_id}/stats", s.allocStats)
	s.mux.HandleFunc("GET /v1/client/stats", s.hostStats)
	s.mux.HandleFunc("GET /v1/client/allocation/{alloc_id}/exec", s.exec)
	for _, m := range []string{"PUT", "POST"} {
		s.mux.HandleFunc(m+" /v1/client/allocation/{alloc_id}/restart", s.restart)
		s.mux.HandleFunc(m+" /v1/client/allocation/{alloc_id}/signal", s.signal)
	}
	for _, m := range []string{"GET", "PUT"} {
		s.mux.HandleFunc(m+" /v1/client/allocation/{alloc_id}/gc", s.allocGC)
		s.mux.HandleFunc(m+" /v1/client/gc", s.clientGC)
	}
}
