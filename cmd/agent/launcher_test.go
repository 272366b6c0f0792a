package agent_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/test/testagent"
	"github.com/ordoplane/ordo/test/testlog"
)

// simCloud is a sim provider with no min-ready instances, so every
// instance the test sees is the request's.
const simCloud = `provider "dev-cloud" {
  driver = "sim"
  pool "main" {
    max_servers = 2
    labels      = ["small"]
  }
  label "small" {
    instance_type = "small"
  }
  sim {
    instance_types = { small = { cores = 2, ram_mb = 4096 } }
  }
}
`

const staticHosts = `provider "hosts" {
  driver = "static"
  pool "main" {
    labels = ["metal"]
  }
  label "metal" {}
  static {
    host "h1" {
      address = "10.0.0.5"
      labels  = ["metal"]
    }
  }
}
`

// The agent runs the launcher on the leader: a sim provider applied over
// HTTP gets a runner, which fulfils a node request with a ready instance
// and, once the request is deleted, deletes the instance. The launcher's
// metrics are on the agent's registry. A static provider gets a runner
// too: its host is registered as a ready instance (P29).
func TestAgentRunsLauncher(t *testing.T) {
	cfg := agent.DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	logs := &testlog.Buffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	cfg.RaftLogOutput = io.Discard
	cfg.Launcher.PollInterval = 50 * time.Millisecond
	s := testagent.StartServer(t, cfg)
	base := "http://" + s.A.HTTPAddr()
	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	get := func(path string, out any) bool {
		code, b := do("GET", path, "")
		return code == 200 && json.Unmarshal(b, out) == nil
	}

	body, err := json.Marshal(map[string]string{"HCL": simCloud, "Filename": "dev-cloud.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	var code int
	var b []byte
	testagent.WaitFor(t, 30*time.Second, "the provider applied (the agent leads)", func() bool {
		code, b = do("POST", "/v1/providers", string(body))
		return code == 200
	})

	code, b = do("POST", "/v1/node-requests", `{"Labels":["small"],"Requestor":"e2e"}`)
	var created struct{ ID string }
	if code != 200 || json.Unmarshal(b, &created) != nil || created.ID == "" {
		t.Fatalf("create node request: %d %s", code, b)
	}

	var req launcher.Request
	testagent.WaitFor(t, 30*time.Second, "the node request fulfilled", func() bool {
		return get("/v1/node-request/"+created.ID, &req) && req.State == events.RequestFulfilled
	})
	if req.Provider != "dev-cloud" || len(req.Instances) != 1 {
		t.Fatalf("fulfilled request: provider %q, instances %v", req.Provider, req.Instances)
	}
	inst := req.Instances[0]
	var in launcher.Instance
	if !get("/v1/instance/"+inst, &in) {
		t.Fatalf("instance %s not readable", inst)
	}
	if in.Provider != "dev-cloud" || in.RequestID != created.ID || in.Requestor != "e2e" || in.ExternalID == "" {
		t.Fatalf("instance: %+v", in)
	}

	// The launcher's metrics are on the agent's registry.
	mfs, err := s.A.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		found = found || mf.GetName() == "ordo_launcher_decisions_total"
	}
	if !found {
		t.Error("ordo_launcher_decisions_total not on the agent's registry")
	}

	// P10: the launcher's pools are registered as its component.
	testagent.WaitFor(t, 30*time.Second, "the launcher's pools registered", func() bool {
		var cs []launcher.Component
		return get("/v1/components?kind=launcher", &cs) && len(cs) == 1 && cs[0].Server != "" && len(cs[0].Pools) == 1 &&
			cs[0].Pools[0].Provider == "dev-cloud" && cs[0].Pools[0].Pool == "main" && cs[0].Pools[0].Driver == "sim"
	})

	if code, b = do("DELETE", "/v1/node-request/"+created.ID, ""); code != 200 {
		t.Fatalf("delete node request: %d %s", code, b)
	}
	testagent.WaitFor(t, 30*time.Second, "the instance deleted", func() bool {
		code, _ := do("GET", "/v1/instance/"+inst, "")
		var list []launcher.Instance
		return code == 404 && get("/v1/instances?provider=dev-cloud", &list) && len(list) == 0
	})

	body, err = json.Marshal(map[string]string{"HCL": staticHosts, "Filename": "hosts.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	if code, b = do("POST", "/v1/providers", string(body)); code != 200 {
		t.Fatalf("apply static provider: %d %s", code, b)
	}
	testagent.WaitFor(t, 30*time.Second, "the static host registered", func() bool {
		var list []launcher.Instance
		return get("/v1/instances?provider=hosts", &list) && len(list) == 1 && list[0].ExternalID == "h1" &&
			list[0].State == events.InstanceReady && len(list[0].Addresses) == 1 && list[0].Addresses[0] == "10.0.0.5"
	})
	if l := logs.String(); strings.Contains(l, "provider names an unknown driver") {
		t.Error("the static driver is unknown to the agent")
	}
}
