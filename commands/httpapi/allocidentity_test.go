package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// With ACLs on, the client agent of the node an allocation runs on reads
// its tasks' workload identities by naming its node (as its other calls
// are authenticated); any other node, or no node and no management
// token, is refused.
func TestAllocIdentityForItsNode(t *testing.T) {
	d := startAgentWith(t, func(c *agent.Config) {
		c.ACL.Enabled = true
		c.Scheduler.Disabled = false
	})
	var boot struct{ SecretID string }
	d.do(t, "PUT", "/v1/acl/bootstrap", nil).decode(t, &boot)
	mgmt := boot.SecretID
	const node = "5b3c1e2a-2222-4f70-8a9b-0c1d2e3f4a5b"
	d.register(t, node)
	d.nodeWrite(t, "PUT", "/v1/client/"+node+"/heartbeat", `{"Status":"ready"}`)
	job := `{"Job":{"ID":"idjob","Name":"idjob","Type":"service","Datacenters":["dc1"],"TaskGroups":[{"Name":"g","Count":1,
		"Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},"Resources":{"CPU":100,"MemoryMB":32}}]}]}}`
	if r := d.do(t, "PUT", "/v1/jobs", strings.NewReader(job), "X-Nomad-Token", mgmt); r.status != 200 {
		t.Fatalf("register job: %d %s", r.status, r.body)
	}
	var allocID string
	deadline := time.Now().Add(testTimeout)
	for allocID == "" {
		r := d.do(t, "GET", "/v1/client/"+node+"/allocations?index=1&wait=2s", nil)
		var list []struct{ ID string }
		r.decode(t, &list)
		if len(list) > 0 {
			allocID = list[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatal("no allocation placed")
		}
	}
	path := "/v1/allocation/" + allocID + "/identity?task=t"
	for _, c := range []struct {
		name, query, token string
		status             int
	}{
		{"no token, no node", "", "", 403},
		{"another node", "&node_id=5b3c1e2a-3333-4f70-8a9b-0c1d2e3f4a5b", "", 403},
		{"its node", "&node_id=" + node, "", 200},
		{"management", "", mgmt, 200},
	} {
		var hdr []string
		if c.token != "" {
			hdr = []string{"X-Nomad-Token", c.token}
		}
		r := d.do(t, "GET", path+c.query, nil, hdr...)
		if r.status != c.status {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
			continue
		}
		if c.status == 200 {
			var out struct{ JWT, KeyID string }
			if err := json.Unmarshal(r.body, &out); err != nil || strings.Count(out.JWT, ".") != 2 {
				t.Errorf("%s: answer %s", c.name, r.body)
			}
		}
	}
	if r := d.do(t, "GET", "/v1/allocation/no-such-alloc/identity?task=t&node_id="+node, nil); r.status != 404 {
		t.Errorf("unknown allocation: %d %s", r.status, r.body)
	}
}
