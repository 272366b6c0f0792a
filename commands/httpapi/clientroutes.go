package httpapi

import (
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
)

// clientRoutes registers the client routes a server proxies to the node
// that answers them (clientfs.go's proxy, as for logs): an allocation's
// files, stats, restart, signal, gc and exec go to its node; the host's
// stats and a node's gc go to the node named by ?node_id.
func (s *Server) clientRoutes() {
	for _, p := range []struct {
		pattern, out string
		cap          string
	}{
		{"GET /v1/client/fs/ls/{id}", "/v1/client/fs/ls/", policy.CapReadFS},
		{"GET /v1/client/fs/stat/{id}", "/v1/client/fs/stat/", policy.CapReadFS},
		{"GET /v1/client/fs/cat/{id}", "/v1/client/fs/cat/", policy.CapReadFS},
		{"GET /v1/client/fs/readat/{id}", "/v1/client/fs/readat/", policy.CapReadFS},
		{"GET /v1/client/fs/stream/{id}", "/v1/client/fs/stream/", policy.CapReadFS},
	} {
		s.handle(p.pattern, s.leaderOnly(endpoint(s.allocProxy(p.cap, func(id string) string { return p.out + id }))))
	}
	suffix := func(sfx string) func(string) string {
		return func(id string) string { return "/v1/client/allocation/" + id + "/" + sfx }
	}
	s.handle("GET /v1/client/allocation/{id}/stats", s.leaderOnly(endpoint(s.allocProxy(policy.CapReadJob, suffix("stats")))))
	for _, m := range []string{"PUT", "POST"} {
		s.handle(m+" /v1/client/allocation/{id}/restart", s.leaderOnly(endpoint(s.allocProxy(policy.CapAllocLifecycle, suffix("restart")))))
		s.handle(m+" /v1/client/allocation/{id}/signal", s.leaderOnly(endpoint(s.allocProxy(policy.CapAllocLifecycle, suffix("signal")))))
	}
	for _, m := range []string{"GET", "PUT"} {
		s.handle(m+" /v1/client/allocation/{id}/gc", s.leaderOnly(endpoint(s.allocProxy(policy.CapSubmitJob, suffix("gc")))))
		s.handle(m+" /v1/client/gc", s.leaderOnly(endpoint(s.nodeProxy("/v1/client/gc"))))
	}
	s.handle("GET /v1/client/stats", s.leaderOnly(endpoint(s.nodeProxy("/v1/client/stats"))))
	// A websocket: net/http clears the connection's deadlines when the
	// proxy takes it over, so the session lasts as long as the command.
	s.handle("GET /v1/client/allocation/{id}/exec", s.leaderOnly(endpoint(s.allocProxy(policy.CapAllocExec, suffix("exec")))))
}

// allocProxy returns a handler proxying the request to the node of the
// path's allocation (a unique prefix is enough) at out(allocID), once the
// caller holds capability c in the allocation's namespace.
func (s *Server) allocProxy(c string, out func(allocID string) string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.proxyToAllocNode(w, r, c, out)
	}
}

// nodeProxy returns a handler proxying the request to the node ?node_id
// names (a unique prefix is enough) at path.
func (s *Server) nodeProxy(path string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.URL.Query().Get("node_id")
		if id == "" {
			return commands.Invalid("node_id", "is required: name the node whose client answers")
		}
		if err := node.ValidID("node_id", id); err != nil {
			return err
		}
		snap := s.cfg.FSM.Store().Snapshot()
		n, err := nodes.Resolve(projections.NewView(snap), id)
		snap.Close()
		var amb *projections.AmbiguousError
		switch {
		case errors.Is(err, projections.ErrNotFound):
			return &commands.NotFoundError{Kind: "node", ID: id}
		case errors.As(err, &amb):
			return commands.Invalid("node_id", "%v", amb)
		case err != nil:
			return err
		}
		s.proxyToNode(w, r, n, path, "")
		return nil
	}
}
