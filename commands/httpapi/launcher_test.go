package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/projections/launcher"
)

const cheapCloud = `provider "cheap-cloud" {
  driver   = "sim"
  priority = 50
  pool "main" {
    max_servers     = 10
    max_cores       = 64
    labels          = ["ubuntu-small"]
    node_attributes = { zone = "a" }
  }
  label "ubuntu-small" {
    instance_type = "small"
    min_ready     = 1
  }
  sim {
    instance_types = { small = { cores = 2, ram_mb = 4096 } }
    quota          = { instances = 20, cores = 40 }
  }
}
`

func hclBody(t *testing.T, src string) *strings.Reader {
	t.Helper()
	b, err := json.Marshal(map[string]string{"HCL": src, "Filename": "cheap-cloud.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReader(string(b))
}

// The launcher's API: a provider applied from the example file
// (again: no new event, P16), a bad file refused naming the field with
// nothing logged, a node request created and read, blocking on the list.
func TestLauncherAPI(t *testing.T) {
	t.Parallel()
	// The API alone: no launcher appending min-ready launches meanwhile
	// (cmd/agent's TestAgentRunsLauncher runs it).
	d := startAgentWith(t, func(c *agent.Config) { c.Launcher.Disabled = true })
	r := d.do(t, "POST", "/v1/providers", hclBody(t, cheapCloud))
	if r.status != 200 {
		t.Fatalf("apply: %d %s", r.status, r.body)
	}
	first := r.index(t)
	if r = d.do(t, "POST", "/v1/providers", hclBody(t, cheapCloud)); r.status != 200 || r.index(t) != first {
		t.Fatalf("apply again: %d %s (index %d, first %d): an equal config must append nothing", r.status, r.body, r.index(t), first)
	}
	bad := strings.Replace(cheapCloud, `labels          = ["ubuntu-small"]`, `labels          = ["gpu"]`, 1)
	if r = d.do(t, "POST", "/v1/providers", hclBody(t, bad)); r.status != 400 || !strings.Contains(string(r.body), "pool.main.labels") {
		t.Fatalf("bad label: %d %s", r.status, r.body)
	}
	noDriver := strings.Replace(cheapCloud, `driver   = "sim"`, ``, 1)
	if r = d.do(t, "POST", "/v1/providers", hclBody(t, noDriver)); r.status != 400 || !strings.Contains(string(r.body), `argument \"driver\" is required`) {
		t.Fatalf("no driver: %d %s", r.status, r.body)
	}
	var st httpapi.ProviderStatus
	d.do(t, "GET", "/v1/provider/cheap-cloud", nil).decode(t, &st)
	if st.Config.Priority != 50 || st.Config.Pools[0].NodeAttributes["zone"] != "a" || st.Quota.Cores != 40 || st.ConfigIndex != first {
		t.Fatalf("status: %+v", st)
	}
	r = d.do(t, "POST", "/v1/node-requests", strings.NewReader(`{"Labels":["ubuntu-small"],"Requestor":"ci-42","Tenant":"team-a"}`))
	var created struct{ ID string }
	r.decode(t, &created)
	if r.status != 200 || created.ID == "" {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var req launcher.Request
	d.do(t, "GET", "/v1/node-request/"+created.ID, nil).decode(t, &req)
	if req.State != "requested" || req.Requestor != "ci-42" {
		t.Fatalf("request: %+v", req)
	}
	if r = d.do(t, "POST", "/v1/node-requests", strings.NewReader(`{"Labels":[]}`)); r.status != 400 || !strings.Contains(string(r.body), "Labels") {
		t.Fatalf("empty labels: %d %s", r.status, r.body)
	}
	var list []launcher.Request
	d.do(t, "GET", "/v1/node-requests", nil).decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("list: %+v", list)
	}
	if r = d.do(t, "DELETE", "/v1/node-request/"+created.ID, nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r = d.do(t, "GET", "/v1/node-request/"+created.ID, nil); r.status != 404 {
		t.Fatalf("after delete: %d %s", r.status, r.body)
	}
	var hist []map[string]any
	d.do(t, "GET", "/v1/history/node_request/"+created.ID, nil).decode(t, &hist)
	if len(hist) != 2 {
		t.Fatalf("history: %+v", hist)
	}
}
