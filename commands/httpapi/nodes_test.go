package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/waittest"
)

// startAgentWith starts a dev agent like startAgent, with tweak applied to
// its config.
// testClusterSecret is startAgentWith's agents' cluster secret.
const testClusterSecret = "httpapi-test-cluster-secret"

func startAgentWith(t testing.TB, tweak func(*agent.Config)) *devAgent {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	// These tests seed evals by hand and watch tables the scheduler writes.
	cfg.Scheduler.Disabled = true
	cfg.Logger = discard
	cfg.RaftLogOutput = io.Discard
	cfg.ClusterSecret = testClusterSecret
	tweak(&cfg)
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: testTimeout}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		if err := a.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	d := &devAgent{Agent: a, base: "http://" + a.HTTPAddr(), client: client}
	// The leader's start-up writes (its server, the launcher component,
	// the first root key, the default namespace) land in any order: wait
	// for all of them, so a test counting the log's events counts its own.
	d.waitFor(t, "the leader's start-up writes", func(v projections.View) bool {
		_, nsErr := namespaces.Get(v, namespaces.Default)
		_, keyErr := keyring.Active(v)
		comps, compErr := launcher.Components(v, "launcher")
		srvs, srvErr := servers.List(v)
		return nsErr == nil && keyErr == nil && compErr == nil && (len(comps) > 0 || cfg.Launcher.Disabled) &&
			srvErr == nil && len(srvs) > 0 && a.Node().IsLeader()
	})
	return d
}

const nodeJSON = `{"ID":%q,"Name":"client-1","Datacenter":"dc1","NodeClass":"compute",
	"Attributes":{"kernel.name":"linux"},"Resources":{"CPU":4000,"MemoryMB":8192,"DiskMB":10000},
	"Drivers":{"exec":{"Detected":true,"Healthy":true}},"HTTPAddr":"10.1.2.3:4646"}`

// nodeWrite is the answer to a node write.
type nodeWrite struct {
	HeartbeatTTL    time.Duration
	EvalIDs         []string
	NodeModifyIndex uint64
	Index           uint64
}

func (d *devAgent) nodeWrite(t testing.TB, method, path, body string) nodeWrite {
	t.Helper()
	r := d.do(t, method, path, strings.NewReader(body))
	if r.status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
	}
	var out nodeWrite
	r.decode(t, &out)
	if out.Index != r.index(t) || out.EvalIDs == nil {
		t.Fatalf("%s %s: answer %s, X-Nomad-Index %s", method, path, r.body, r.header.Get("X-Nomad-Index"))
	}
	return out
}

func (d *devAgent) register(t testing.TB, id string) nodeWrite {
	t.Helper()
	return d.nodeWrite(t, "PUT", "/v1/client/register", strings.ReplaceAll(nodeJSONFor(id), "\n", ""))
}

func nodeJSONFor(id string) string {
	b, _ := json.Marshal(id)
	return strings.Replace(nodeJSON, "%q", string(b), 1)
}

func (d *devAgent) getNode(t testing.TB, id string) *nodes.Node {
	t.Helper()
	r := d.do(t, "GET", "/v1/node/"+id, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET node %s: %d %s", id, r.status, r.body)
	}
	var n nodes.Node
	r.decode(t, &n)
	return &n
}

func TestNodeLifecycle(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	const id = "5b3c1e2a-1111-4f70-8a9b-0c1d2e3f4a5b"
	reg := d.register(t, id)
	if reg.HeartbeatTTL < 10*time.Second {
		t.Fatalf("register answered TTL %v", reg.HeartbeatTTL)
	}
	n := d.getNode(t, id)
	if n.Status != events.NodeStatusInitializing || n.SchedulingEligibility != events.NodeEligible ||
		n.NodePool != "default" || n.Resources.CPU != 4000 || n.Drivers["exec"].Healthy != true || n.CreateIndex != reg.Index {
		t.Fatalf("registered node = %+v", n)
	}
	// A heartbeat makes it ready and answers a TTL; a unique prefix finds it.
	hb := d.nodeWrite(t, "PUT", "/v1/client/"+id+"/heartbeat", `{"Status":"ready"}`)
	if hb.HeartbeatTTL <= 0 || hb.NodeModifyIndex <= reg.Index {
		t.Fatalf("heartbeat answer %+v", hb)
	}
	if n := d.getNode(t, id[:6]); n.Status != events.NodeStatusReady || n.StatusUpdatedAt == 0 {
		t.Fatalf("after heartbeat = %+v", n)
	}
	// A heartbeat that changes nothing appends nothing.
	before := d.archiveLen(t)
	d.nodeWrite(t, "PUT", "/v1/client/"+id+"/heartbeat", ``)
	if d.archiveLen(t) != before {
		t.Fatal("a heartbeat of a ready node was logged")
	}
	// Re-registering keeps the status.
	d.register(t, id)
	if n := d.getNode(t, id); n.Status != events.NodeStatusReady {
		t.Fatalf("re-register changed status to %s", n.Status)
	}

	// The list is Nomad's NodeListStub.
	d.register(t, "5b3c1e2a-2222")
	r := d.do(t, "GET", "/v1/nodes?prefix=5b3c1e2a-2", nil)
	var stubs []map[string]any
	r.decode(t, &stubs)
	if len(stubs) != 1 || stubs[0]["ID"] != "5b3c1e2a-2222" || stubs[0]["Address"] != "10.1.2.3" ||
		stubs[0]["SchedulingEligibility"] != "eligible" || stubs[0]["Status"] != "initializing" {
		t.Fatalf("list = %s", r.body)
	}
	if r := d.do(t, "GET", "/v1/node/5b3c1e2a", nil); r.status != 400 || r.apiError(t).Field != "id" {
		t.Fatalf("ambiguous prefix: %d %s", r.status, r.body)
	}

	// Drain: ineligible; eligible refused while draining; stop with MarkEligible.
	d.nodeWrite(t, "POST", "/v1/node/"+id+"/drain", `{"NodeID":"`+id+`","DrainSpec":{"Deadline":3600000000000,"IgnoreSystemJobs":true}}`)
	n = d.getNode(t, id)
	if !n.Drain || n.SchedulingEligibility != events.NodeIneligible || n.DrainStrategy == nil ||
		n.DrainStrategy.Deadline != int64(time.Hour) || n.DrainStrategy.ForceDeadline-n.DrainStrategy.StartedAt != int64(time.Hour) {
		t.Fatalf("draining node = %+v", n)
	}
	var raw map[string]json.RawMessage
	d.do(t, "GET", "/v1/node/"+id, nil).decode(t, &raw)
	var ds map[string]any
	if err := json.Unmarshal(raw["DrainStrategy"], &ds); err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.RFC3339Nano, ds["StartedAt"].(string)); err != nil {
		t.Fatalf("DrainStrategy %s: StartedAt is not RFC 3339: %v", raw["DrainStrategy"], err)
	}
	if r := d.do(t, "PUT", "/v1/node/"+id+"/eligibility", strings.NewReader(`{"NodeID":"`+id+`","Eligibility":"eligible"}`)); r.status != 400 || r.apiError(t).Field != "Eligibility" {
		t.Fatalf("eligible while draining: %d %s", r.status, r.body)
	}
	d.nodeWrite(t, "PUT", "/v1/node/"+id+"/drain", `{"DrainSpec":null,"MarkEligible":true}`)
	if n := d.getNode(t, id); n.Drain || n.SchedulingEligibility != events.NodeEligible {
		t.Fatalf("drain stopped = %+v", n)
	}
	d.nodeWrite(t, "POST", "/v1/node/"+id+"/eligibility", `{"Eligibility":"ineligible"}`)
	if n := d.getNode(t, id); n.SchedulingEligibility != events.NodeIneligible {
		t.Fatalf("ineligible = %+v", n)
	}

	// Purge removes it; its heartbeats are then 404, telling the client to register.
	d.nodeWrite(t, "POST", "/v1/node/"+id+"/purge", ``)
	if r := d.do(t, "GET", "/v1/node/"+id, nil); r.status != 404 {
		t.Fatalf("GET purged node: %d", r.status)
	}
	if r := d.do(t, "PUT", "/v1/client/"+id+"/heartbeat", nil); r.status != 404 {
		t.Fatalf("heartbeat of purged node: %d %s", r.status, r.body)
	}
}

func TestNodeBadInputNeverReachesTheLog(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.register(t, "n1")
	valid := nodeJSONFor("n2")
	with := func(old, new string) string { return strings.Replace(valid, old, new, 1) }
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		field                    string
	}{
		{"register empty body", "PUT", "/v1/client/register", ``, 400, "body"},
		{"register malformed", "PUT", "/v1/client/register", `{"ID":`, 400, "body"},
		{"register no ID", "PUT", "/v1/client/register", with(`"ID":"n2",`, ``), 400, "ID"},
		{"register bad ID", "PUT", "/v1/client/register", with(`"ID":"n2"`, `"ID":"a/b"`), 400, "ID"},
		{"register no Name", "PUT", "/v1/client/register", with(`"Name":"client-1",`, ``), 400, "Name"},
		{"register no Datacenter", "PUT", "/v1/client/register", with(`"Datacenter":"dc1",`, ``), 400, "Datacenter"},
		{"register as down", "PUT", "/v1/client/register", with(`"ID":"n2",`, `"ID":"n2","Status":"down",`), 400, "Status"},
		{"register CPU string", "PUT", "/v1/client/register", with(`"CPU":4000`, `"CPU":"lots"`), 400, "Resources.CPU"},
		{"register negative memory", "PUT", "/v1/client/register", with(`"MemoryMB":8192`, `"MemoryMB":-1`), 400, "Resources.MemoryMB"},
		{"heartbeat bad status", "PUT", "/v1/client/n1/heartbeat", `{"Status":"down"}`, 400, "Status"},
		{"heartbeat malformed", "PUT", "/v1/client/n1/heartbeat", `{"Status":`, 400, "body"},
		{"heartbeat bad id", "PUT", "/v1/client/a%20b/heartbeat", `{}`, 400, "id"},
		{"heartbeat unknown", "PUT", "/v1/client/nope/heartbeat", `{}`, 404, ""},
		{"eligibility bogus", "POST", "/v1/node/n1/eligibility", `{"Eligibility":"maybe"}`, 400, "Eligibility"},
		{"eligibility id mismatch", "POST", "/v1/node/n1/eligibility", `{"NodeID":"n9","Eligibility":"eligible"}`, 400, "NodeID"},
		{"eligibility empty body", "POST", "/v1/node/n1/eligibility", ``, 400, "body"},
		{"eligibility unknown node", "POST", "/v1/node/nope/eligibility", `{"Eligibility":"ineligible"}`, 404, ""},
		{"drain deadline string", "POST", "/v1/node/n1/drain", `{"DrainSpec":{"Deadline":"1h"}}`, 400, "DrainSpec.Deadline"},
		{"drain mark eligible while starting", "POST", "/v1/node/n1/drain", `{"DrainSpec":{},"MarkEligible":true}`, 400, "MarkEligible"},
		{"get bad id", "GET", "/v1/node/a%20b", ``, 400, "id"},
		{"get unknown", "GET", "/v1/node/zzz", ``, 404, ""},
		{"list bad index", "GET", "/v1/nodes?index=x", ``, 400, "index"},
		{"purge unknown", "POST", "/v1/node/nope/purge", ``, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, applied := d.archiveLen(t), d.FSM().Applied()
			r := d.do(t, tc.method, tc.path, strings.NewReader(tc.body))
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if e := r.apiError(t); e.Field != tc.field {
				t.Fatalf("error %s, want Field %q", r.body, tc.field)
			}
			if d.archiveLen(t) != before || d.FSM().Applied() != applied {
				t.Fatal("bad input reached the log")
			}
		})
	}
}

func TestNodesBlockingQuery(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	first := d.register(t, "n1")
	r := d.do(t, "GET", "/v1/nodes", nil)
	if r.index(t) != first.Index {
		t.Fatalf("X-Nomad-Index %d, want %d", r.index(t), first.Index)
	}
	// A namespace write does not wake a nodes query; a heartbeat does.
	ch := d.blockingGet("/v1/nodes?index=" + r.header.Get("X-Nomad-Index") + "&wait=10s")
	d.putNamespace(t, "other", "")
	hb := d.nodeWrite(t, "PUT", "/v1/client/n1/heartbeat", `{}`)
	got := receive(t, ch)
	if got.response.index(t) != hb.Index {
		t.Fatalf("blocking query woke at %d, want %d", got.response.index(t), hb.Index)
	}
	var stubs []nodes.Stub
	got.response.decode(t, &stubs)
	if len(stubs) != 1 || stubs[0].Status != events.NodeStatusReady {
		t.Fatalf("list = %s", got.response.body)
	}
}

// TestMissedHeartbeatMarksNodeDown runs the agent's heartbeat monitor with
// short TTLs: a node that stops heartbeating goes down, and comes back
// ready with its next heartbeat.
func TestMissedHeartbeatMarksNodeDown(t *testing.T) {
	t.Parallel()
	d := startAgentWith(t, func(c *agent.Config) {
		c.HeartbeatMinTTL, c.HeartbeatGrace, c.FailoverHeartbeatTTL = 100*time.Millisecond, 50*time.Millisecond, time.Second
	})
	if ttl := d.register(t, "n1").HeartbeatTTL; ttl < 100*time.Millisecond || ttl >= 200*time.Millisecond {
		t.Fatalf("TTL %v", ttl)
	}
	d.waitFor(t, "n1 down", func(v projections.View) bool {
		n, err := nodes.Get(v, "n1")
		return err == nil && n.Status == events.NodeStatusDown && n.LastMissedHeartbeatIndex > 0
	})
	// The node may miss again at once under load, so the answer is read
	// from the log rather than from the node's current state.
	hb := d.nodeWrite(t, "PUT", "/v1/client/n1/heartbeat", `{}`)
	var back bool
	for _, ev := range pt.Archived(t, d.Store()) {
		if ev.Index == hb.Index && ev.Type == "NodeStatusUpdated" {
			p, err := events.Decode(ev)
			back = err == nil && p.(*events.NodeStatusUpdated).Status == events.NodeStatusReady
		}
	}
	if !back {
		t.Fatalf("the heartbeat at index %d did not make the node ready", hb.Index)
	}
	// The monitor counts the miss once its command has applied, after
	// the node read down above: wait for the count.
	missed := func() float64 {
		mfs, _ := d.Registry().Gather()
		for _, mf := range mfs {
			if mf.GetName() == "ordo_heartbeat_missed_total" {
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		return 0
	}
	if !waittest.Poll(testTimeout, func() bool { return missed() >= 1 }) {
		t.Fatalf("ordo_heartbeat_missed_total = %v", missed())
	}
}
