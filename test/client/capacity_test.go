// This file tests capacity on demand end to end: a real server
// agent with the launcher's local driver and the capacity processor, a
// job too big for its node pool, real `ordo agent -client` processes
// launched as instances, registering as nodes and running the job's
// allocations, then returned once idle (docs/capacity.md).

package client

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/capacity"
	"github.com/ordoplane/ordo/processors/launcher/driver/local"
	"github.com/ordoplane/ordo/processors/launcher/driver/local/localtest"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	plauncher "github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/test/testagent"
)

// localCloud is a provider of the local driver whose pool is the node
// pool "batch": its instances register as nodes of that pool.
const localCloud = `provider "laptop" {
  driver = "local"
  pool "batch" {
    max_servers = 3
    labels      = ["local-small"]
  }
  label "local-small" {}
}
`

func callAddr(t *testing.T, addr, method, path, body string) (int, string) {
	t.Helper()
	ans := testagent.Call(t, addr, method, path, body)
	return ans.Status, ans.Body
}

func mustCallAddr(t *testing.T, addr, method, path, body string) string {
	t.Helper()
	code, b := callAddr(t, addr, method, path, body)
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	return b
}

// THE end-to-end capacity test. The only server has no client: node
// pool "batch" is empty. A batch job of two allocations that must run on
// distinct hosts is registered there; its eval blocks. Capacity on
// demand files two node requests for the pool's label; the local
// provider launches two real client processes; each registers a node of
// pool "batch" whose meta names its instance; the blocked eval unblocks
// and both allocations run and complete, one per launched node. Once
// idle for the pool's idle timeout the nodes are drained, their requests
// deleted, their processes stopped and the nodes deregistered. The
// request's history shows the chain.
func TestCapacityOnDemandEndToEnd(t *testing.T) {
	t.Parallel()
	bin := localtest.Build(t)
	start := time.Now()
	instances := t.TempDir()
	t.Cleanup(func() { local.KillAll(instances) })
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.Name, cfg.BootstrapExpect = "s1", 1
	if os.Getenv("CAPACITY_LOG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg.Launcher.PollInterval = 100 * time.Millisecond
	cfg.Capacity.Pools = []capacity.Pool{{Name: "batch", Label: "local-small", MaxRequests: 3, IdleTimeout: 2 * time.Second}}
	cfg.LocalDriver = agentLocal(bin, instances)
	s := testagent.StartServer(t, cfg)
	testagent.WaitForLeader(t, []*testagent.Server{s})
	addr := s.A.HTTPAddr()

	body, _ := json.Marshal(map[string]string{"HCL": localCloud, "Filename": "laptop.hcl"})
	mustCallAddr(t, addr, "PUT", "/v1/providers", string(body))
	// The job's node pool must exist before the job (as in Nomad); its nodes come later.
	mustCallAddr(t, addr, "PUT", "/v1/node/pools", `{"Name":"batch"}`)
	mustCallAddr(t, addr, "PUT", "/v1/jobs", `{"Job":{"ID":"crunch","Name":"crunch","Type":"batch","Datacenters":["dc1"],"NodePool":"batch",`+
		`"Constraints":[{"Operand":"distinct_hosts","RTarget":"true"}],`+
		`"TaskGroups":[{"Name":"work","Count":2,"Tasks":[{"Name":"t","Driver":"mock","Config":{"run_for":"500ms"},`+
		`"Resources":{"CPU":100,"MemoryMB":64}}]}]}}`)

	view := func(fn func(v projections.View)) {
		snap := s.A.Store().Snapshot()
		defer snap.Close()
		fn(projections.NewView(snap))
	}
	requests := func() (out []*plauncher.Request) {
		view(func(v projections.View) {
			_ = plauncher.ScanRequests(v, "", "", func(r *plauncher.Request) error {
				if r.Requestor == capacity.Requestor("batch") {
					out = append(out, r)
				}
				return nil
			})
		})
		return out
	}
	// instance id → node, for the nodes that registered on an instance.
	linked := func() map[string]*nodes.Node {
		out := map[string]*nodes.Node{}
		view(func(v projections.View) {
			_ = nodes.Scan(v, nodes.Query{}, func(n *nodes.Node) error {
				if id := n.Meta[local.InstanceMetaKey]; id != "" {
					out[id] = n
				}
				return nil
			})
		})
		return out
	}
	const wait = 30 * time.Second
	var reqs []*plauncher.Request
	testagent.WaitFor(t, wait, "two fulfilled node requests of capacity:batch", func() bool {
		reqs = requests()
		n := 0
		for _, r := range reqs {
			if r.State == events.RequestFulfilled {
				n++
			}
		}
		return n == 2
	})
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (one per needed instance)", len(reqs))
	}
	var insts []string
	for _, r := range reqs {
		insts = append(insts, r.Instances...)
	}
	testagent.WaitFor(t, wait, "both instances registered as ready nodes of pool batch", func() bool {
		l := linked()
		for _, id := range insts {
			if n := l[id]; n == nil || n.NodePool != "batch" || n.Status != events.NodeStatusReady {
				return false
			}
		}
		return true
	})
	nodeOf := linked()
	testagent.WaitFor(t, wait, "both allocations of crunch complete, one on each launched node", func() bool {
		done := map[string]bool{}
		view(func(v projections.View) {
			as, _ := allocs.ByJob(v, "default", "crunch")
			for _, a := range as {
				if a.ClientStatus == events.AllocClientComplete {
					done[a.NodeID] = true
				}
			}
		})
		for _, id := range insts {
			if !done[nodeOf[id].ID] {
				return false
			}
		}
		return true
	})
	placed := time.Since(start)
	// The chain in history: the job's eval blocked, each launched node
	// registered under its instance's name with an allocation of crunch.
	if h := mustCallAddr(t, addr, "GET", "/v1/history/job/default/crunch", ""); !strings.Contains(h, "blocked") {
		t.Errorf("job history shows no blocked eval:\n%s", h)
	}
	for _, id := range insts {
		h := mustCallAddr(t, addr, "GET", "/v1/history/node/"+nodeOf[id].ID, "")
		for _, want := range []string{"NodeRegistered", id, "AllocsPlaced", "alloc crunch.work"} {
			if !strings.Contains(h, want) {
				t.Errorf("history of node %s (instance %s) lacks %q:\n%s", nodeOf[id].ID, id, want, h)
			}
		}
	}

	// Idle: drained, requests deleted, processes gone, nodes deregistered.
	testagent.WaitFor(t, wait, "idle nodes returned: requests and instances deleted, nodes deregistered", func() bool {
		return len(requests()) == 0 && len(linked()) == 0 && instancesLeft(t, view) == 0
	})
	for _, r := range reqs {
		h := mustCallAddr(t, addr, "GET", "/v1/history/node_request/"+r.ID, "")
		for _, want := range []string{"NodeRequestCreated", "InstanceCreated", "NodeRequestFulfilled", "NodeRequestDeleted"} {
			if !strings.Contains(h, want) {
				t.Errorf("history of request %s lacks %s:\n%s", r.ID, want, h)
			}
		}
		if !strings.Contains(h, capacity.Requestor("batch")) {
			t.Errorf("history of request %s does not name its requestor %s", r.ID, capacity.Requestor("batch"))
		}
	}
	// Each request was filed with its link to the blocked eval: the
	// eval's history leads to the request.
	links := 0
	for _, ev := range projectionstest.Archived(t, s.A.Store()) {
		p, err := events.DecodeIf(ev, "CapacityRequested")
		if err != nil {
			t.Fatal(err)
		}
		c, ok := p.(*events.CapacityRequested)
		if !ok {
			continue
		}
		links++
		if len(c.Evals) == 0 {
			t.Fatalf("request %s filed for no eval", c.RequestID)
		}
		if h := mustCallAddr(t, addr, "GET", "/v1/history/eval/"+c.Evals[0], ""); !strings.Contains(h, c.RequestID) {
			t.Errorf("history of blocked eval %s does not lead to request %s:\n%s", c.Evals[0], c.RequestID, h)
		}
	}
	if links != len(reqs) {
		t.Errorf("%d CapacityRequested events, want one per request (%d)", links, len(reqs))
	}
	// The metrics count what happened: 2 filed, 2 idle returns, none open.
	got := map[string]float64{}
	mfs, err := s.A.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "ordo_capacity_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			got[mf.GetName()] += v
		}
	}
	for name, want := range map[string]float64{"ordo_capacity_requests_filed_total": 2, "ordo_capacity_idle_returns_total": 2,
		"ordo_capacity_requests_outstanding": 0} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v (all: %v)", name, got[name], want, got)
		}
	}
	t.Logf("placed after %v, returned after %v", placed.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

func instancesLeft(t *testing.T, view func(func(projections.View))) int {
	n := 0
	view(func(v projections.View) {
		_ = plauncher.ScanInstances(v, "", "", func(*plauncher.Instance) error { n++; return nil })
	})
	return n
}

// agentLocal is the server's local driver: the built binary, instances
// under dir, clients offering the mock task driver.
func agentLocal(bin, dir string) agent.LocalDriverConfig {
	return agent.LocalDriverConfig{Binary: bin, Dir: dir, TaskDrivers: []string{"mock"}}
}
