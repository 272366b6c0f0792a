package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// forwardedHeader marks a request forwarded once, so it is never forwarded again.
const forwardedHeader = "X-Ordo-Forwarded-By"

// forwarder proxies requests to the leader's HTTP address.
type forwarder struct {
	node      *raftlog.Node
	fsm       *projections.FSM
	self      string
	transport *http.Transport
}

func newForwarder(node *raftlog.Node, fsm *projections.FSM, self string) *forwarder {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 512
	return &forwarder{node: node, fsm: fsm, self: self, transport: t}
}

func (f *forwarder) close() { f.transport.CloseIdleConnections() }

// leaderHTTP returns the leader's HTTP address from the servers projection.
func (f *forwarder) leaderHTTP() (string, error) {
	id, _ := f.node.Leader()
	if id == "" {
		return "", commands.ErrNoLeader
	}
	snap := f.fsm.Store().Snapshot()
	defer snap.Close()
	s, err := servers.Get(projections.NewView(snap), id)
	if errors.Is(err, projections.ErrNotFound) {
		return "", fmt.Errorf("%w: leader %s has not registered its HTTP address yet", commands.ErrNoLeader, id)
	}
	if err != nil {
		return "", err
	}
	return s.HTTPAddr, nil
}

func (f *forwarder) forward(w http.ResponseWriter, r *http.Request) {
	if by := r.Header.Get(forwardedHeader); by != "" {
		writeError(w, fmt.Errorf("%w: forwarded by %s to a server that is not the leader", commands.ErrNoLeader, by))
		return
	}
	addr, err := f.leaderHTTP()
	if err != nil {
		writeError(w, err)
		return
	}
	target := &url.URL{Scheme: "http", Host: addr}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = r.Host
			pr.Out.Header.Set(forwardedHeader, f.self)
		},
		Transport:     f.transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeError(w, fmt.Errorf("%w: forwarding to leader at %s: %v", commands.ErrNoLeader, addr, err))
		},
	}
	p.ServeHTTP(w, r)
}

// leader answers h on the leader, forwards it from a follower, and answers
// reads locally when ?stale is set. A default read is answered only once
// the leader has confirmed its state is current (raftlog.Node.ConsistentRead):
// it then reflects every write acknowledged before it began, whichever
// server took the write. Writes are gated in the command pipeline.
func (s *Server) leader(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		if read && isStale(r) {
			s.setLeaderHeaders(w)
			h(w, r)
			return
		}
		if !s.node.IsLeader() {
			s.fwd.forward(w, r)
			return
		}
		if read && !s.cfg.UnconfirmedReads {
			if err := s.node.ConsistentRead(r.Context()); err != nil {
				if errors.Is(err, raftlog.ErrNotLeader) && !s.node.IsLeader() {
					s.fwd.forward(w, r) // deposed meanwhile: the new leader answers
					return
				}
				writeError(w, fmt.Errorf("%w: %v", commands.ErrNoLeader, err))
				return
			}
		}
		s.setLeaderHeaders(w)
		h(w, r)
	}
}

func isStale(r *http.Request) bool {
	v, ok := r.URL.Query()["stale"]
	return ok && (len(v) == 0 || v[0] == "" || v[0] == "true")
}

// setLeaderHeaders sets X-Nomad-KnownLeader and X-Nomad-LastContact.
func (s *Server) setLeaderHeaders(w http.ResponseWriter) {
	id, _ := s.node.Leader()
	w.Header().Set("X-Nomad-KnownLeader", strconv.FormatBool(id != ""))
	last := time.Duration(0)
	if !s.node.IsLeader() {
		last = time.Since(s.node.LastContact())
	}
	w.Header().Set("X-Nomad-LastContact", strconv.FormatInt(last.Milliseconds(), 10))
}
