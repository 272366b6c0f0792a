package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
)

// nodeUnavailableError is a node the server cannot proxy a request to:
// 503 when the node is down or disconnected, 502 when it advertises no
// address or does not answer.
type nodeUnavailableError struct {
	status int
	msg    string
}

func (e *nodeUnavailableError) Error() string { return e.msg }

func writeNodeError(w http.ResponseWriter, e *nodeUnavailableError) {
	writeJSON(w, e.status, api.ErrorBody{Error: e.msg, Status: e.status})
}

// clientFSLogs is GET /v1/client/fs/logs/{id}: the allocation's node
// answers (client/httpapi) and this server proxies its answer, streaming.
// The id may be a unique prefix.
func (s *Server) clientFSLogs(w http.ResponseWriter, r *http.Request) error {
	return s.proxyToAllocNode(w, r, policy.CapReadLogs, func(id string) string { return "/v1/client/fs/logs/" + id })
}

// proxyToAllocNode proxies r to the node of the path's allocation (the
// id may be a unique prefix), at out(the allocation's id), once the
// caller holds capability c in the allocation's namespace. Every client
// route a server answers goes through here or proxyToNode.
func (s *Server) proxyToAllocNode(w http.ResponseWriter, r *http.Request, c string, out func(allocID string) string) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	snap := s.cfg.FSM.Store().Snapshot()
	v := projections.NewView(snap)
	a, err := resolveAlloc(v, id)
	var n *nodes.Node
	if err == nil {
		err = s.authorizeNamespace(r, a.Namespace, c)
	}
	if err == nil {
		n, err = nodes.Get(v, a.NodeID)
		if errors.Is(err, projections.ErrNotFound) {
			err = &nodeUnavailableError{http.StatusServiceUnavailable, fmt.Sprintf("node %s of allocation %s is not registered", a.NodeID, a.ID)}
		}
	}
	snap.Close()
	if ne, ok := errors.AsType[*nodeUnavailableError](err); ok {
		writeNodeError(w, ne)
		return nil
	}
	if err != nil {
		return err
	}
	s.proxyToNode(w, r, n, out(a.ID), " of allocation "+a.ID)
	return nil
}

// proxyToNode proxies r to node n's client API at path, streaming (and
// upgrading, for a websocket): 503 when the node is down or
// disconnected, 502 when it advertises no address or does not answer.
// what ends the errors' subject (" of allocation <id>").
func (s *Server) proxyToNode(w http.ResponseWriter, r *http.Request, n *nodes.Node, path, what string) {
	switch {
	case n.Status == events.NodeStatusDown || n.Status == events.NodeStatusDisconnected:
		writeNodeError(w, &nodeUnavailableError{http.StatusServiceUnavailable,
			fmt.Sprintf("node %s (%s)%s is %s", n.Name, n.ID, what, n.Status)})
		return
	case n.HTTPAddr == "":
		writeNodeError(w, &nodeUnavailableError{http.StatusBadGateway,
			fmt.Sprintf("node %s (%s)%s advertises no HTTP address", n.Name, n.ID, what)})
		return
	}
	target := &url.URL{Scheme: "http", Host: n.HTTPAddr}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path = path
			pr.Out.URL.RawPath = ""
		},
		Transport:     s.fwd.transport,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the caller went away
			}
			writeNodeError(w, &nodeUnavailableError{http.StatusBadGateway,
				fmt.Sprintf("node %s (%s)%s at %s: %v", n.Name, n.ID, what, n.HTTPAddr, err)})
		},
	}
	p.ServeHTTP(w, r)
}
