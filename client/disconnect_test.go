package client_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/driver/mock"
	"github.com/ordoplane/ordo/test/testagent"
)

// switchProxy forwards to a server until it is cut off: then it drops
// every connection, as an unreachable server does.
type switchProxy struct {
	srv  *httptest.Server
	down atomic.Bool
	mu   sync.Mutex
	// seen records "METHOD path" of the requests forwarded while recording.
	seen      []string
	recording bool
}

func newSwitchProxy(t *testing.T, target string) *switchProxy {
	u, err := url.Parse("http://" + target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &switchProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.down.Load() {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		p.mu.Lock()
		if p.recording {
			p.seen = append(p.seen, r.Method+" "+r.URL.Path)
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *switchProxy) cut() {
	p.down.Store(true)
	p.srv.CloseClientConnections()
}

func (p *switchProxy) restore() {
	p.mu.Lock()
	p.recording = true
	p.mu.Unlock()
	p.down.Store(false)
}

func (p *switchProxy) saw(prefix, suffix string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.seen {
		if strings.HasPrefix(s, prefix) && strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}

// While the servers cannot be reached the client keeps its allocations
// running and keeps what happens to them; once they can, it reports it.
func TestClientWhileServersUnreachable(t *testing.T) {
	addr, nc := startServer(t)
	proxy := newSwitchProxy(t, addr)
	cs := &counts{starts: map[string]int{}}
	var recovers atomic.Int64
	md, err := mock.New(mock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := runClient(t, strings.TrimPrefix(proxy.srv.URL, "http://"), t.TempDir(), true,
		&countingDriver{Driver: md, t: t, counts: cs, recovers: &recovers})
	waitNodeReady(t, nc, c.NodeID())

	if _, _, err := nc.Jobs().Register(mockJob("svc", 1, map[string]any{"run_for": "1h"}, nil), nil); err != nil {
		t.Fatal(err)
	}
	batch := mockJob("batch", 1, map[string]any{"run_for": "1s"}, nil)
	batch.Type = pointer("batch")
	if _, _, err := nc.Jobs().Register(batch, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "both allocations running", func() bool {
		return allStatus(t, nc, "svc", 1, "running")() && allStatus(t, nc, "batch", 1, "running")()
	})
	batchID := allocs(t, nc, "batch")[0].ID
	svcID := allocs(t, nc, "svc")[0].ID

	proxy.cut()
	r, ok := c.Runner(batchID)
	if !ok {
		t.Fatal("no runner for the batch alloc")
	}
	testagent.WaitFor(t, 10*time.Second, "the batch task to complete on the client", r.Terminal)
	if s := allocs(t, nc, "batch")[0].ClientStatus; s != "running" {
		t.Fatalf("servers heard %s while cut off", s)
	}
	svc, _ := c.Runner(svcID)
	if u, _ := svc.ClientUpdate(); u.ClientStatus != "running" {
		t.Fatalf("service alloc %s while the servers are unreachable", u.ClientStatus)
	}

	proxy.restore()
	testagent.WaitFor(t, 20*time.Second, "the batch alloc reported complete", allStatus(t, nc, "batch", 1, "complete"))
	if !proxy.saw("PUT /v1/client/", "/allocs") {
		t.Error("no alloc update after the servers came back")
	}
	if s := allocs(t, nc, "svc")[0].ClientStatus; s != "running" {
		t.Errorf("service alloc %s after reconnecting", s)
	}
	if n := cs.total(); n != 2 {
		t.Errorf("%d task starts, want 2 (nothing restarted)", n)
	}
}

// Terminal allocations beyond GCMaxAllocs lose their directory and record
// once the servers have their final state.
func TestClientCollectsTerminalAllocs(t *testing.T) {
	addr, nc := startServer(t)
	md, err := mock.New(mock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	c, _ := runClientGC(t, addr, dataDir, 1, md)
	waitNodeReady(t, nc, c.NodeID())
	batch := mockJob("batch", 3, map[string]any{"run_for": "10ms"}, nil)
	batch.Type = pointer("batch")
	if _, _, err := nc.Jobs().Register(batch, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "3 allocations complete", allStatus(t, nc, "batch", 3, "complete"))
	count := func(dir string) int {
		entries, _ := os.ReadDir(filepath.Join(dataDir, dir))
		return len(entries)
	}
	testagent.WaitFor(t, 10*time.Second, "one alloc dir and record left", func() bool {
		return count("alloc") == 1 && count("client/allocs") == 1
	})
}
