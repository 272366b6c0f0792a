package compat

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"

	"github.com/ordoplane/ordo/test/testagent"
)

// TestAgentRoutesWithNomadClient drives the agent, region and status
// routes a Nomad user's tools read first.
func TestAgentRoutesWithNomadClient(t *testing.T) {
	a, c := startDev(t)

	m, err := c.Agent().Members()
	if err != nil {
		t.Fatal(err)
	}
	if m.ServerRegion != "global" || m.ServerDC != "dc1" || m.ServerName == "" || len(m.Members) != 1 {
		t.Fatalf("members = %+v", m)
	}
	mem := m.Members[0]
	if mem.Status != "alive" || mem.Port == 0 || mem.Addr != "127.0.0.1" || mem.Tags["leader"] != "true" || mem.Tags["region"] != "global" {
		t.Fatalf("member = %+v", mem)
	}

	srvs, err := c.Agent().Servers()
	if err != nil || len(srvs) != 1 || srvs[0] != a.HTTPAddr() {
		t.Fatalf("servers = %v, %v (agent at %s)", srvs, err, a.HTTPAddr())
	}
	regions, err := c.Regions().List()
	if err != nil || len(regions) != 1 || regions[0] != "global" {
		t.Fatalf("regions = %v, %v", regions, err)
	}

	self, err := c.Agent().Self()
	if err != nil {
		t.Fatal(err)
	}
	if self.Config["Region"] != "global" || self.Config["Datacenter"] != "dc1" || self.Config["NodeName"] == "" {
		t.Fatalf("self config region/datacenter/name = %v/%v/%v", self.Config["Region"], self.Config["Datacenter"], self.Config["NodeName"])
	}
	if self.Member.Name == "" || self.Member.Port == 0 || self.Stats["raft"]["state"] != "Leader" {
		t.Fatalf("self member = %+v, raft stats %v", self.Member, self.Stats["raft"])
	}
	if name, err := c.Agent().NodeName(); err != nil || name == "" {
		t.Fatalf("node name = %q, %v", name, err)
	}
	if dc, err := c.Agent().Datacenter(); err != nil || dc != "dc1" {
		t.Fatalf("datacenter = %q, %v", dc, err)
	}
	if r, err := c.Agent().Region(); err != nil || r != "global" {
		t.Fatalf("region = %q, %v", r, err)
	}
}

// TestNodePoolsWithNomadClient walks the node pool API: the built-in
// pools, register, info, nodes and jobs of a pool, and delete.
func TestNodePoolsWithNomadClient(t *testing.T) {
	a, c := startDev(t)
	np := c.NodePools()

	list, _, err := np.List(nil)
	if err != nil || len(list) != 2 || list[0].Name != "all" || list[1].Name != "default" {
		t.Fatalf("built-in pools = %+v, %v", list, err)
	}
	wm, err := np.Register(&api.NodePool{Name: "gpu", Description: "GPU machines", Meta: map[string]string{"team": "ml"}}, nil)
	if err != nil || wm.LastIndex == 0 {
		t.Fatalf("register = %+v, %v", wm, err)
	}
	p, _, err := np.Info("gpu", nil)
	if err != nil || p.Description != "GPU machines" || p.Meta["team"] != "ml" || p.CreateIndex == 0 {
		t.Fatalf("info = %+v, %v", p, err)
	}
	if _, _, err := np.Info("missing", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("info of a missing pool: %v", err)
	}
	if _, err := np.Register(&api.NodePool{Name: "default", Description: "mine"}, nil); err == nil {
		t.Fatal("the default pool was changed")
	}
	if pl, _, err := np.PrefixList("gp", nil); err != nil || len(pl) != 1 || pl[0].Name != "gpu" {
		t.Fatalf("prefix list = %+v, %v", pl, err)
	}

	// A node in gpu and one in default; a job in gpu runs on its node only.
	testagent.PutOK(t, a.HTTPAddr(), "/v1/client/register", `{"ID":"gpu-1","Name":"gpu-1","Datacenter":"dc1","NodePool":"gpu",`+
		`"Attributes":{"kernel.name":"linux"},"Resources":{"CPU":4000,"MemoryMB":4096,"DiskMB":10000},`+
		`"Drivers":{"exec":{"Detected":true,"Healthy":true}}}`)
	testagent.PutOK(t, a.HTTPAddr(), "/v1/client/gpu-1/heartbeat", `{"Status":"ready"}`)
	testagent.ReadyNode(t, a.HTTPAddr(), "cpu-1", 4000, 4096)
	nodes, _, err := np.ListNodes("gpu", nil)
	if err != nil || len(nodes) != 1 || nodes[0].ID != "gpu-1" || nodes[0].NodePool != "gpu" {
		t.Fatalf("gpu nodes = %+v, %v", nodes, err)
	}
	if all, _, err := np.ListNodes("all", nil); err != nil || len(all) != 2 {
		t.Fatalf("all nodes = %+v, %v", all, err)
	}
	j := testagent.SleepJob("service", "train", 2, 100)
	j.NodePool = new("gpu")
	testagent.Register(t, c, j)
	jobs, _, err := np.ListJobs("gpu", nil)
	if err != nil || len(jobs) != 1 || jobs[0].ID != "train" {
		t.Fatalf("gpu jobs = %+v, %v", jobs, err)
	}
	testagent.WaitFor(t, testagent.ServerTimeout, "train placed", func() bool {
		allocs, _, err := c.Jobs().Allocations("train", false, nil)
		if err != nil || len(allocs) != 2 {
			return false
		}
		for _, al := range allocs {
			if al.NodeID != "gpu-1" {
				t.Fatalf("train placed on %s, outside its pool", al.NodeID)
			}
		}
		return true
	})
	if _, err := np.Delete("gpu", nil); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("delete of a pool in use: %v", err)
	}
	if _, err := np.Register(&api.NodePool{Name: "empty"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := np.Delete("empty", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := np.Info("empty", nil); err == nil {
		t.Fatal("a deleted pool is still there")
	}
}

// TestOperatorConfigWithNomadClient reads and writes the scheduler and
// autopilot configurations, and checks that the scheduler and the job
// register honour them.
func TestOperatorConfigWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	op := c.Operator()

	got, _, err := op.SchedulerGetConfiguration(nil)
	if err != nil || got.SchedulerConfig == nil || got.SchedulerConfig.SchedulerAlgorithm != api.SchedulerAlgorithmBinpack {
		t.Fatalf("default scheduler configuration = %+v, %v", got, err)
	}
	set, wm, err := op.SchedulerSetConfiguration(&api.SchedulerConfiguration{SchedulerAlgorithm: api.SchedulerAlgorithmSpread,
		PreemptionConfig: api.PreemptionConfig{SystemSchedulerEnabled: true}, MemoryOversubscriptionEnabled: true}, nil)
	if err != nil || !set.Updated || wm.LastIndex == 0 {
		t.Fatalf("set = %+v, %+v, %v", set, wm, err)
	}
	got, _, err = op.SchedulerGetConfiguration(nil)
	if err != nil || got.SchedulerConfig.SchedulerAlgorithm != api.SchedulerAlgorithmSpread ||
		!got.SchedulerConfig.MemoryOversubscriptionEnabled || got.SchedulerConfig.ModifyIndex != wm.LastIndex {
		t.Fatalf("after set = %+v, %v", got.SchedulerConfig, err)
	}
	// A check-and-set at a stale index is not applied.
	stale := *got.SchedulerConfig
	stale.ModifyIndex--
	if res, _, err := op.SchedulerCASConfiguration(&stale, nil); err != nil || res.Updated {
		t.Fatalf("stale cas = %+v, %v", res, err)
	}
	cur := *got.SchedulerConfig
	cur.RejectJobRegistration = true
	if res, _, err := op.SchedulerCASConfiguration(&cur, nil); err != nil || !res.Updated {
		t.Fatalf("cas = %+v, %v", res, err)
	}
	// With ACLs disabled nobody holds a management token: every
	// registration is refused, as Nomad documents.
	if _, _, err := c.Jobs().Register(testagent.SleepJob("service", "refused", 1, 100), nil); err == nil ||
		!strings.Contains(err.Error(), "403") {
		t.Fatalf("register while rejected: %v", err)
	}
	cur.RejectJobRegistration = false
	if _, _, err := op.SchedulerSetConfiguration(&cur, nil); err != nil {
		t.Fatal(err)
	}
	testagent.Register(t, c, testagent.SleepJob("service", "accepted", 1, 100))

	ap, _, err := op.AutopilotGetConfiguration(nil)
	if err != nil || ap.LastContactThreshold == 0 || ap.ServerStabilizationTime == 0 {
		t.Fatalf("autopilot configuration = %+v, %v", ap, err)
	}
	ap.CleanupDeadServers, ap.MaxTrailingLogs = true, 500
	if _, err := op.AutopilotSetConfiguration(ap, nil); err != nil {
		t.Fatal(err)
	}
	if ap2, _, err := op.AutopilotGetConfiguration(nil); err != nil || !ap2.CleanupDeadServers || ap2.MaxTrailingLogs != 500 {
		t.Fatalf("autopilot after set = %+v, %v", ap2, err)
	}
	testagent.WaitFor(t, testagent.ServerTimeout, "autopilot health", func() bool {
		h, _, err := op.AutopilotServerHealth(nil)
		return err == nil && h.Healthy && len(h.Servers) == 1 && h.Servers[0].Leader && h.Leader != ""
	})

	if err := c.System().ReconcileSummaries(); err != nil {
		t.Fatal(err)
	}
}

// TestSearchWithNomadClient runs prefix and fuzzy searches over jobs,
// nodes, namespaces and node pools.
func TestSearchWithNomadClient(t *testing.T) {
	a, c := startDev(t)
	testagent.ReadyNode(t, a.HTTPAddr(), "node-search-1", 4000, 4096)
	testagent.Register(t, c, testagent.SleepJob("service", "web-frontend", 1, 100))
	testagent.Register(t, c, testagent.SleepJob("service", "web-backend", 1, 100))
	if _, err := c.Namespaces().Register(&api.Namespace{Name: "web-team"}, nil); err != nil {
		t.Fatal(err)
	}

	res, _, err := c.Search().PrefixSearch("web", contexts.All, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Matches[contexts.Jobs]; len(got) != 2 || got[0] != "web-backend" || got[1] != "web-frontend" {
		t.Fatalf("jobs matching web = %v", got)
	}
	if got := res.Matches[contexts.Namespaces]; len(got) != 1 || got[0] != "web-team" {
		t.Fatalf("namespaces matching web = %v", got)
	}
	if _, ok := res.Truncations[contexts.Allocs]; !ok || res.Truncations[contexts.Jobs] {
		t.Fatalf("truncations = %v", res.Truncations)
	}
	res, _, err = c.Search().PrefixSearch("node-se", contexts.Nodes, nil)
	if err != nil || len(res.Matches[contexts.Nodes]) != 1 || len(res.Matches) != 1 {
		t.Fatalf("nodes matching node-se = %+v, %v", res, err)
	}
	res, _, err = c.Search().PrefixSearch("def", contexts.NodePools, nil)
	if err != nil || len(res.Matches[contexts.NodePools]) != 1 {
		t.Fatalf("pools matching def = %+v, %v", res, err)
	}

	fz, _, err := c.Search().FuzzySearch("front", contexts.All, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fz.Matches[contexts.Jobs]; len(got) != 1 || got[0].ID != "web-frontend" || got[0].Scope[0] != "default" {
		t.Fatalf("fuzzy jobs = %+v", got)
	}
	if got := fz.Matches[contexts.Groups]; len(got) != 1 || got[0].ID != "web-frontend" || len(got[0].Scope) != 2 {
		t.Fatalf("fuzzy groups = %+v", got)
	}
	fz, _, err = c.Search().FuzzySearch("main", contexts.All, nil)
	if err != nil || len(fz.Matches[contexts.Tasks]) != 2 {
		t.Fatalf("fuzzy tasks = %+v, %v", fz, err)
	}
	if _, _, err := c.Search().FuzzySearch("w", contexts.All, nil); err == nil {
		t.Fatal("a one-character fuzzy search was answered")
	}
}

// TestSnapshotAndMetricsWithNomadClient checks the Digest header the
// client verifies on a snapshot and Nomad's JSON metrics.
func TestSnapshotAndMetricsWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	rc, err := c.Operator().Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	file, err := io.ReadAll(rc) // the client checks the digest at EOF
	rc.Close()
	if err != nil || len(file) == 0 {
		t.Fatalf("snapshot: %d bytes, %v", len(file), err)
	}
	if _, err := c.Operator().SnapshotRestore(bytes.NewReader(file), nil); err != nil {
		t.Fatalf("restore of the saved file: %v", err)
	}

	sum, _, err := c.Operator().MetricsSummary(nil)
	if err != nil || sum.Timestamp == "" || len(sum.Gauges) == 0 || len(sum.Counters) == 0 || len(sum.Samples) == 0 {
		t.Fatalf("metrics summary: %d gauges, %d counters, %d samples, %v", len(sum.Gauges), len(sum.Counters), len(sum.Samples), err)
	}
	raw, err := c.Operator().Metrics(nil)
	if err != nil || !json.Valid(raw) {
		t.Fatalf("metrics: %v", err)
	}
	prom, err := c.Operator().Metrics(&api.QueryOptions{Params: map[string]string{"format": "prometheus"}})
	if err != nil || !strings.Contains(string(prom), "# TYPE ordo_http_request_seconds histogram") {
		t.Fatalf("prometheus metrics: %.200s, %v", prom, err)
	}
}

// TestPauseEvalBrokerWithNomadClient: while the scheduler configuration
// pauses the eval broker a registered job's eval stays pending; lifting
// the pause restores the broker from the state and the job is placed.
func TestPauseEvalBrokerWithNomadClient(t *testing.T) {
	a, c := startDev(t)
	testagent.ReadyNode(t, a.HTTPAddr(), "pause-1", 4000, 4096)
	op := c.Operator()
	if _, _, err := op.SchedulerSetConfiguration(&api.SchedulerConfiguration{SchedulerAlgorithm: api.SchedulerAlgorithmBinpack,
		PauseEvalBroker: true}, nil); err != nil {
		t.Fatal(err)
	}
	resp, _, err := c.Jobs().Register(testagent.SleepJob("service", "paused", 1, 100), nil)
	if err != nil {
		t.Fatal(err)
	}
	ev, _, err := c.Evaluations().Info(resp.EvalID, nil)
	if err != nil || ev.Status != "pending" {
		t.Fatalf("eval while paused = %+v, %v", ev, err)
	}
	if _, _, err := op.SchedulerSetConfiguration(&api.SchedulerConfiguration{SchedulerAlgorithm: api.SchedulerAlgorithmBinpack}, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, testagent.ServerTimeout, "the paused job placed once resumed", func() bool {
		allocs, _, err := c.Jobs().Allocations("paused", false, nil)
		return err == nil && len(allocs) == 1
	})
}
