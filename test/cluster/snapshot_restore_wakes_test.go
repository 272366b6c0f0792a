package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ordoplane/ordo/test/testagent"
)

// blockingAnswer is what a blocking GET answered.
type blockingAnswer struct {
	status int
	index  uint64
	body   []byte
	err    error
}

// blockingGet sends GET path to addr in the background.
func blockingGet(addr, path string) <-chan blockingAnswer {
	ch := make(chan blockingAnswer, 1)
	go func() {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			ch <- blockingAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		index, _ := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
		ch <- blockingAnswer{status: resp.StatusCode, index: index, body: b, err: err}
	}()
	return ch
}

// openBlocking reads the server's gauge of blocking queries waiting.
func openBlocking(t *testing.T, s *testagent.Server) float64 {
	t.Helper()
	mfs, err := s.A.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "ordo_blocking_queries_open" && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

// A restore wakes the blocking queries waiting when it happens, table
// and key ones alike (a client's long-poll for its allocations), and
// they answer the restored state at the restore's index: the indexes the
// file holds are below what the callers saw, so without it they would
// wait out their whole wait (here five minutes) and then answer an
// older index than they passed.
func TestRestoreWakesBlockingQueries(t *testing.T) {
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.Name, cfg.BootstrapExpect = "s1", 1
	s := testagent.StartServer(t, cfg)
	testagent.WaitForLeader(t, []*testagent.Server{s})
	// The leader creates the default namespace once: before the test's
	// writes, so it wakes no query below.
	testagent.WaitFor(t, 10*time.Second, "the default namespace", func() bool {
		resp, err := http.Get("http://" + s.HTTP + "/v1/namespace/default")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	put(t, s.HTTP, "saved")
	file := testagent.SaveSnapshot(t, s.HTTP)
	put(t, s.HTTP, "lost")

	// The index each query last saw, after the file was saved.
	resp, err := http.Get("http://" + s.HTTP + "/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	nsIndex, _ := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
	if nsIndex == 0 {
		t.Fatal("namespaces answered no index")
	}
	nsCh := blockingGet(s.HTTP, fmt.Sprintf("/v1/namespaces?index=%d&wait=5m", nsIndex))
	nodeCh := blockingGet(s.HTTP, fmt.Sprintf("/v1/client/node-1/allocations?index=%d&wait=5m", nsIndex))
	testagent.WaitFor(t, 10*time.Second, "both queries to block", func() bool { return openBlocking(t, s) == 2 })

	status, body := testagent.RestoreSnapshot(t, s.HTTP, file)
	if status != http.StatusOK {
		t.Fatalf("restore: %d %s", status, body)
	}
	var res struct{ Index uint64 }
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan blockingAnswer{"namespaces": nsCh, "client allocations": nodeCh} {
		select {
		case a := <-ch:
			if a.err != nil || a.status != http.StatusOK {
				t.Fatalf("%s: %d %v %s", name, a.status, a.err, a.body)
			}
			if a.index < res.Index {
				t.Errorf("%s answered index %d, below the restore's %d", name, a.index, res.Index)
			}
			if name == "namespaces" {
				var list []struct{ Name string }
				json.Unmarshal(a.body, &list)
				for _, ns := range list {
					if ns.Name == "lost" {
						t.Errorf("namespaces answered %s: not the restored state", a.body)
					}
				}
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s still blocked 30s after the restore", name)
		}
	}
}
