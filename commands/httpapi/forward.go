package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// forwardedHeader marks a request forwarded once, so it is never forwarded again.
const forwardedHeader = "X-Ordo-Forwarded-By"

// forwarder proxies requests to the leader's HTTP address.
type forwarder struct {
	node      *raftlog.Node
	fsm       *fsm.FSM
	self      string
	transport *http.Transport
}

func newForwarder(node *raftlog.Node, fsm *fsm.FSM, self string) *forwarder {
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
	f.forwardTo(w, r, addr, func(w http.ResponseWriter, err error) {
		writeError(w, fmt.Errorf("%w: forwarding to leader at %s: %v", commands.ErrNoLeader, addr, err))
	})
}

// forwardTo proxies r, streaming and marked forwarded, to the server
// whose HTTP address is addr; fail answers when that server does not.
func (f *forwarder) forwardTo(w http.ResponseWriter, r *http.Request, addr string, fail func(http.ResponseWriter, error)) {
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
			fail(w, err)
		},
	}
	p.ServeHTTP(w, r)
}

// leader answers h on the leader, forwards writes from a follower, and
// answers reads here: a default read is linearizable, reflecting every
// write acknowledged before it began, whichever server took the write.
// On the leader it waits until the leader has confirmed its state is
// current (raftlog.Node.ConsistentRead); on a follower until the follower
// has applied the leader's read index (followerread.go). A read with
// ?stale is answered at once from this server's state. Writes are gated
// in the command pipeline.
func (s *Server) leader(h http.HandlerFunc) http.HandlerFunc {
	return s.routed(h, true)
}

// leaderOnly is leader for reads that need what only the leader holds
// (its raft view, its processors' state, a root key it may alone have):
// a follower forwards them.
func (s *Server) leaderOnly(h http.HandlerFunc) http.HandlerFunc {
	return s.routed(h, false)
}

func (s *Server) routed(h http.HandlerFunc, followerReads bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		if read && isStale(r) {
			s.setLeaderHeaders(w)
			h(w, r)
			return
		}
		if !s.node.IsLeader() {
			if read && followerReads && !s.cfg.UnconfirmedReads {
				err := s.awaitReadIndex(r.Context())
				if err == nil {
					s.metrics.followerReads.WithLabelValues("local").Inc()
					s.setLeaderHeaders(w)
					h(w, r.WithContext(context.WithValue(r.Context(), followerReadKey{}, true)))
					return
				}
				s.metrics.followerReads.WithLabelValues("forwarded").Inc()
				s.cfg.Logger.Debug("follower read forwarded to the leader", "path", r.URL.Path, "err", err)
			}
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
