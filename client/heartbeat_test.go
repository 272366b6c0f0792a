package client_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/mock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/test/testagent"
)

// fakeServers answers the client API: a node the "servers" forget once
// (a 404 on its first heartbeat), short TTLs, no allocations.
type fakeServers struct {
	mu                    sync.Mutex
	registers, heartbeats int
	updates               int
	statuses              []string
}

func (f *fakeServers) handler(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("X-Nomad-Index", "1")
	switch {
	case r.URL.Path == "/v1/client/register":
		var n events.Node
		_ = json.NewDecoder(r.Body).Decode(&n)
		f.registers++
		f.statuses = append(f.statuses, "register:"+n.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"HeartbeatTTL": int64(100 * time.Millisecond)})
	case strings.HasSuffix(r.URL.Path, "/heartbeat"):
		f.heartbeats++
		if f.registers == 1 && f.heartbeats == 1 {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{"Error": "node not found", "Status": 404})
			return
		}
		var body struct{ Status string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.statuses = append(f.statuses, "heartbeat:"+body.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"HeartbeatTTL": int64(100 * time.Millisecond)})
	case strings.HasSuffix(r.URL.Path, "/allocations"):
		if r.URL.Query().Get("index") != "" {
			f.mu.Unlock()
			<-r.Context().Done() // nothing ever changes
			f.mu.Lock()
			return
		}
		_, _ = w.Write([]byte("[]"))
	case strings.HasSuffix(r.URL.Path, "/allocs"):
		f.updates++
		_, _ = w.Write([]byte(`{"Index": 1}`))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (f *fakeServers) counts() (registers, heartbeats, updates int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registers, f.heartbeats, f.updates
}

// A heartbeat answered 404 registers the node again; the client keeps
// heartbeating within the TTL, asking for ready, and sends an alloc
// update (empty: the N1 marker) after registering (the two registrations
// fall in one coalescing window, so one update may carry both).
func TestReregisterOn404(t *testing.T) {
	f := &fakeServers{}
	srv := httptest.NewServer(http.HandlerFunc(f.handler))
	t.Cleanup(srv.Close)
	md, err := mock.New(mock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, client.Config{DataDir: t.TempDir(), Servers: []string{srv.URL}, Drivers: []driver.Driver{md}})
	testagent.WaitFor(t, 10*time.Second, "a second registration and later heartbeats", func() bool {
		r, h, u := f.counts()
		return r == 2 && h >= 5 && u >= 1
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.statuses {
		if s != "register:initializing" && s != "heartbeat:ready" {
			t.Errorf("call %s", s)
		}
	}
}
