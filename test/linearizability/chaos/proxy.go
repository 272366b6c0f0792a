package chaos

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Network is a TCP proxy in front of each server's raft port that can cut
// a server off from the others on loopback. Each server advertises its
// proxy's address, so every raft connection to server i passes through
// proxy i. A connection's sender is told by the advertised address in the
// header of its first RPC (hashicorp/raft's RPCHeader.Addr, the first
// address in the stream): while a server is isolated, connections it
// opens and connections to it are closed, and new ones are refused.
//
// HTTP is not proxied: an isolated server still answers clients, as a
// leader cut off by a switch would.
type Network struct {
	listeners []net.Listener
	addrs     []string // advertised address of each server

	mu struct {
		sync.Mutex
		targets  []string // raft listen address of each server
		isolated map[int]bool
		links    map[*link]struct{}
		closed   bool
	}
	wg sync.WaitGroup
}

// link is one proxied connection.
type link struct {
	from, to   int // from is -1 when the sender was not recognised
	down, up   net.Conn
	closeOnce  sync.Once
	closedBoth chan struct{}
}

func (l *link) close() {
	l.closeOnce.Do(func() {
		l.down.Close()
		if l.up != nil {
			l.up.Close()
		}
		close(l.closedBoth)
	})
}

// NewNetwork listens for n servers on 127.0.0.1; SetTarget tells each
// proxy where its server's raft listens.
func NewNetwork(n int) (*Network, error) {
	nw := &Network{}
	nw.mu.targets = make([]string, n)
	nw.mu.isolated = map[int]bool{}
	nw.mu.links = map[*link]struct{}{}
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			nw.Close()
			return nil, fmt.Errorf("raft proxy listen: %w", err)
		}
		nw.listeners = append(nw.listeners, ln)
		nw.addrs = append(nw.addrs, ln.Addr().String())
	}
	for i, ln := range nw.listeners {
		nw.wg.Add(1)
		go func() {
			defer nw.wg.Done()
			nw.accept(i, ln)
		}()
	}
	return nw, nil
}

// Addr returns the address server i advertises: its proxy's.
func (nw *Network) Addr(i int) string { return nw.addrs[i] }

// SetTarget sets the raft address proxy i forwards to.
func (nw *Network) SetTarget(i int, addr string) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.mu.targets[i] = addr
}

// Isolate cuts server i off from every other server until Heal.
func (nw *Network) Isolate(i int) {
	nw.mu.Lock()
	nw.mu.isolated[i] = true
	var cut []*link
	for l := range nw.mu.links {
		if l.from == i || l.to == i {
			cut = append(cut, l)
		}
	}
	nw.mu.Unlock()
	for _, l := range cut {
		l.close()
	}
}

// Heal lets server i's traffic through again.
func (nw *Network) Heal(i int) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	delete(nw.mu.isolated, i)
}

// Close stops the proxies and closes every connection through them.
func (nw *Network) Close() {
	nw.mu.Lock()
	nw.mu.closed = true
	var all []*link
	for l := range nw.mu.links {
		all = append(all, l)
	}
	nw.mu.Unlock()
	for _, ln := range nw.listeners {
		ln.Close()
	}
	for _, l := range all {
		l.close()
	}
	nw.wg.Wait()
}

func (nw *Network) accept(to int, ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		nw.wg.Add(1)
		go func() {
			defer nw.wg.Done()
			nw.serve(to, c)
		}()
	}
}

// maxPeek bounds how much of a connection is read to find its sender.
const maxPeek = 64 << 10

// serve proxies one connection to server to.
func (nw *Network) serve(to int, down net.Conn) {
	l := &link{from: -1, to: to, down: down, closedBoth: make(chan struct{})}
	// The sender's address is in the first RPC's header: read until it
	// shows (or give up and pass the connection as an unknown sender's).
	var buf []byte
	chunk := make([]byte, 4096)
	_ = down.SetReadDeadline(time.Now().Add(10 * time.Second))
	for l.from < 0 && len(buf) < maxPeek {
		n, err := down.Read(chunk)
		buf = append(buf, chunk[:n]...)
		l.from = nw.sender(buf, to)
		if err != nil {
			break
		}
	}
	_ = down.SetReadDeadline(time.Time{})

	nw.mu.Lock()
	target := nw.mu.targets[to]
	refused := nw.mu.closed || nw.mu.isolated[to] || (l.from >= 0 && nw.mu.isolated[l.from])
	nw.mu.Unlock()
	if refused || len(buf) == 0 {
		down.Close()
		return
	}
	up, err := net.DialTimeout("tcp", target, 2*time.Second)
	if err != nil {
		down.Close()
		return
	}
	l.up = up
	nw.mu.Lock()
	// Isolated since the check above: refuse after all.
	if nw.mu.closed || nw.mu.isolated[to] || (l.from >= 0 && nw.mu.isolated[l.from]) {
		nw.mu.Unlock()
		l.close()
		return
	}
	nw.mu.links[l] = struct{}{}
	nw.mu.Unlock()
	defer func() {
		nw.mu.Lock()
		delete(nw.mu.links, l)
		nw.mu.Unlock()
	}()

	if _, err := up.Write(buf); err != nil {
		l.close()
		return
	}
	var copies sync.WaitGroup
	copies.Add(2)
	go func() {
		defer copies.Done()
		_, _ = io.Copy(up, down)
		l.close()
	}()
	go func() {
		defer copies.Done()
		_, _ = io.Copy(down, up)
		l.close()
	}()
	copies.Wait()
}

// sender returns the server whose advertised address appears first in b
// (the longest at the same place), or -1.
func (nw *Network) sender(b []byte, to int) int {
	best, at := -1, -1
	for i, a := range nw.addrs {
		if i == to {
			continue
		}
		p := bytes.Index(b, []byte(a))
		if p < 0 {
			continue
		}
		if at < 0 || p < at || (p == at && len(a) > len(nw.addrs[best])) {
			best, at = i, p
		}
	}
	return best
}
