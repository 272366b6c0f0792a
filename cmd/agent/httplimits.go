package agent

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands/httpapi/connlimit"
	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// The API's bounds come from Config.HTTP (the agent file's limits block,
// docs/operations.md): header, body, write and idle timeouts, and the
// connections one address may hold open. httpapi extends them for
// blocking queries, streams and snapshot uploads.

// limitedListener is the API's listener with the per-address cap.
type limitedListener = connlimit.Listener

// limitListener caps the connections one address may hold open on the
// API's listener; it closes ln when it cannot.
// It also registers ordo_http_body_timeouts_total, which the servers
// built after it (the API's, the client's) count into.
func (a *Agent) limitListener(ln net.Listener) (net.Listener, error) {
	l, err := a.cfg.HTTP.Listen(ln, "api", a.reg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	timeouts := prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_http_body_timeouts_total",
		Help: "Requests cut off because their body had not arrived by the body deadline."})
	if err := a.reg.Register(timeouts); err != nil {
		l.Close()
		return nil, fmt.Errorf("agent: %w", err)
	}
	a.cfg.HTTP.BodyTimeouts = timeouts
	a.apiLn = l
	return l, nil
}

// newHTTPServer returns a server for h with the agent's HTTP limits. Once
// raft runs, the other servers' addresses are exempt from the cap: a
// follower forwards each of its clients' requests (blocking queries
// included) on a connection of its own.
func (a *Agent) newHTTPServer(h http.Handler) *http.Server {
	if a.apiLn != nil && a.node != nil {
		p := &peerHosts{self: a.id, servers: a.node.Servers, ttl: 5 * time.Second}
		a.apiLn.SetExempt(p.has)
	}
	return httplimit.NewServer(h, a.cfg.HTTP)
}

// limitHandler sets h's body deadline, for a handler set on a server
// newHTTPServer built.
func (a *Agent) limitHandler(h http.Handler) http.Handler { return httplimit.Handler(h, a.cfg.HTTP) }

// peerHosts caches the hosts of the other servers in the raft
// configuration, read again once it is ttl old, and whenever an address
// is not in it (raft answers its configuration without its main loop,
// and only connections over the cap ask), so a server that just joined
// is exempt at once.
type peerHosts struct {
	self    string
	servers func() ([]raftlog.Server, error)
	ttl     time.Duration

	mu struct {
		sync.Mutex
		hosts map[string]bool
		at    time.Time
	}
}

// has reports whether ip is the host of another server.
func (p *peerHosts) has(ip string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	age := time.Since(p.mu.at)
	if p.mu.hosts == nil || age > p.ttl || !p.mu.hosts[ip] {
		p.mu.at = time.Now()
		if servers, err := p.servers(); err == nil { // on error keep the last set
			hosts := map[string]bool{}
			for _, s := range servers {
				if s.ID == p.self {
					continue
				}
				if h, _, err := net.SplitHostPort(s.Address); err == nil {
					hosts[h] = true
				}
			}
			p.mu.hosts = hosts
		}
	}
	return p.mu.hosts[ip]
}
