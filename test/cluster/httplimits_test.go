package cluster

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
	"github.com/ordoplane/ordo/test/testagent"
)

// TestForwardedLongAnswersUnderLimits (issue 31): with a write timeout
// and a per-address cap far below what a follower forwards, blocking
// queries sent to a follower and forwarded to the leader outlast the
// write timeout and are all answered: the deadline is extended before
// forwarding, and the other servers are exempt from the cap.
func TestForwardedLongAnswersUnderLimits(t *testing.T) {
	const wt = 300 * time.Millisecond
	lim := httplimit.Config{WriteTimeout: wt, MaxConnsPerClient: 3}
	start := func(name string, join []string) *server {
		cfg := testagent.ServerConfig(t.TempDir())
		cfg.Name, cfg.BootstrapExpect, cfg.Join, cfg.HTTP = name, 3, join, lim
		return testagent.StartServer(t, cfg)
	}
	a := start("a", nil)
	b := start("b", []string{a.HTTP})
	c := start("c", []string{a.HTTP})
	list := []*server{a, b, c}
	leader := testagent.WaitForLeader(t, list)
	follower := b
	if follower == leader {
		follower = c
	}
	client := &http.Client{Timeout: timeout}
	var index uint64
	testagent.WaitFor(t, timeout, "the default namespace on the follower", func() bool {
		resp, err := client.Get("http://" + follower.HTTP + "/v1/namespace/default")
		if err != nil {
			return false
		}
		resp.Body.Close()
		index, _ = strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
		return resp.StatusCode == 200 && index > 0
	})

	const n = 8 // more than the cap, each forwarded on a connection of its own
	errs := make(chan error, n)
	for range n {
		go func() {
			url := fmt.Sprintf("http://%s/v1/namespaces?index=%d&wait=%dms", follower.HTTP, index, (3 * wt).Milliseconds())
			resp, err := client.Get(url)
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = fmt.Errorf("%d %s", resp.StatusCode, b)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("forwarded blocking query: %v", err)
		}
	}
}
