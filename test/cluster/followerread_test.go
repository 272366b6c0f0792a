package cluster

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/test/testagent"
)

// testFollowerReads: a default read on a follower, sent the moment a write
// is acknowledged by the leader, sees that write, and the follower answers
// it from its own state (after the leader's read index) rather than
// forwarding it. Without the wait for the read index to apply, the
// follower would often answer 404 for a namespace it has not applied yet.
func testFollowerReads(t *testing.T, c *testagent.Client, list []*server) {
	before := followerReads(t, list)
	const n = 100
	for i := range n {
		name := fmt.Sprintf("fr-%d", i)
		// A starved machine may move the leadership mid-run: the write
		// goes to whoever leads until one acknowledges it (an upsert, so
		// a retry is harmless); the read goes to a follower of that one.
		var leader *server
		var res testagent.WriteResult
		testagent.WaitFor(t, testagent.ServerTimeout, "put "+name+" acknowledged by a leader", func() bool {
			leader = testagent.WaitForLeader(t, list)
			r, err := c.PutNamespace(context.Background(), leader.HTTP, name, "")
			res = r
			return err == nil && r.Status == http.StatusOK
		})
		var followers []*server
		for _, s := range list {
			if s != leader {
				followers = append(followers, s)
			}
		}
		f := followers[i%len(followers)]
		// A 503 (leadership moving) answers nothing about the data: the
		// read is asked again, and must still see the write. Any other
		// answer is final.
		var ns struct{ Name string }
		var code int
		var err error
		testagent.WaitFor(t, testagent.ServerTimeout, "read "+name+" answered", func() bool {
			code, err = c.GetJSON(f.HTTP, "/v1/namespace/"+name, &ns)
			return err != nil || code != http.StatusServiceUnavailable
		})
		if err != nil || code != http.StatusOK || ns.Name != name {
			t.Fatalf("read %s on follower %s right after its write was acknowledged (index %d): status %d, %v, %+v",
				name, f.Name, res.Index, code, err, ns)
		}
	}
	after := followerReads(t, list)
	if local := after["local"] - before["local"]; local < n*9/10 {
		t.Fatalf("followers answered %d of %d reads themselves (forwarded %d), want nearly all",
			local, n, after["forwarded"]-before["forwarded"])
	}
}

// followerReads sums ordo_http_follower_reads_total by "answered" over list.
func followerReads(t *testing.T, list []*server) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, s := range list {
		resp, err := http.Get("http://" + s.HTTP + "/v1/metrics?format=prometheus")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			rest, ok := strings.CutPrefix(line, `ordo_http_follower_reads_total{answered="`)
			if !ok {
				continue
			}
			how, value, _ := strings.Cut(rest, `"} `)
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			out[how] += int(v)
		}
		resp.Body.Close()
	}
	return out
}
