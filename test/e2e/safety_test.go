// This file holds the end-to-end tests of issue 5's safety
// guarantee (DESIGN.md invariant 6, "replay has no side effects"):
// rebuilding projections and reading the past run projections only — no
// processor acts, nothing is mirrored, nothing is appended.
//
// Each test runs a real dev agent (Pebble on disk, raft over TCP, the HTTP
// API) and compares the raft log's last index, the applied index, the
// archive and the live projections before and after the operation, and
// what the leader's processors did meanwhile:
//
//   - TestTimeTravelAppendsNothing: reads at_index and at_time (history/
//     timetravel) and the versions store's backfill from the archive run
//     beside the live server; the log,
//     the archive and the live projections do not move and no live
//     watcher — which is how processors learn of applied entries — wakes.
//   - TestRebuildAppendsNothing: an online rebuild of every projection
//     (POST /v1/operator/projections/rebuild) appends nothing and ends
//     with the same projections.
//   - TestRebuildDoesNotFeedProcessors: the rebuild's replay of a job's
//     history (its eval pending, then blocked) reaches no processor: the
//     eval feed enqueues nothing and the scheduler decides nothing again.
//
// `ordo replay` (a history file served read-only) is covered in cmd/ordo
// (TestReplayRunsNoProcessor), which owns the replay.
//
// Nothing is mirrored: the Kafka mirror (processors/mirror) is a
// supervisor processor that follows the live notifier and the archive. A
// rebuild moves neither the applied index nor the archive, and time
// travel and replay publish to no live notifier and run no supervisor, so
// the mirror has nothing to send. Once processors/mirror lands, run it on
// kfake in these tests and assert that no record is produced (high-water
// marks unchanged) across each operation.

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/replay"
	"github.com/ordoplane/ordo/test/testagent"
	"github.com/ordoplane/ordo/test/testmetric"
)

// stopped holds the agents a test shut down itself (stop), which startSafetyAgent's
// cleanup leaves alone.
var stopped sync.Map

// stop shuts a down before the test ends.
func stop(t *testing.T, a *agent.Agent) {
	t.Helper()
	stopped.Store(a, true)
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

// startSafetyAgent runs a dev agent on loopback with nodes that never miss a
// heartbeat, and cfg changed by tweak; it
// returns once the agent leads and the default namespace exists.
func startSafetyAgent(t *testing.T, tweak func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := testagent.DevConfig(t.TempDir())
	testagent.QuietNodes(&cfg)
	if tweak != nil {
		tweak(&cfg)
	}
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, done := stopped.Load(a); !done {
			a.Shutdown()
		}
	})
	// The leader's start-up writes are in: the default namespace, this
	// server at its current HTTP address, its launcher component. (A
	// restarted agent has the namespace already; the others follow.)
	testagent.WaitFor(t, testagent.ServerTimeout, "the agent to lead with its start-up writes applied", func() bool {
		snap := a.Store().Snapshot()
		defer snap.Close()
		v := projections.NewView(snap)
		if _, err := namespaces.Get(v, namespaces.Default); err != nil || !a.Node().IsLeader() {
			return false
		}
		if s, err := servers.Get(v, a.ID()); err != nil || s.HTTPAddr != a.HTTPAddr() {
			return false
		}
		if a.Config().Launcher.Disabled {
			return true
		}
		id := events.Component{Kind: events.ComponentLauncher, Server: a.ID()}.ComponentID()
		_, err := launcher.GetComponent(v, id)
		return err == nil
	})
	return a
}

// call makes one request to a's API and returns the status and body.
func call(t *testing.T, a *agent.Agent, method, path, body string) (int, string) {
	t.Helper()
	ans := testagent.Call(t, a.HTTPAddr(), method, path, body)
	return ans.Status, ans.Body
}

func mustCall(t *testing.T, a *agent.Agent, method, path, body string, want int) string {
	t.Helper()
	code, b := call(t, a, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d %s; want %d", method, path, code, b, want)
	}
	return b
}

// readyNodes registers n nodes through the client API and heartbeats them ready.
func readyNodes(t *testing.T, a *agent.Agent, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("node-%d", i)
		mustCall(t, a, "PUT", "/v1/client/register", fmt.Sprintf(`{"ID":%q,"Name":%q,"Datacenter":"dc1",`+
			`"Attributes":{"kernel.name":"linux"},"Resources":{"CPU":2000,"MemoryMB":2048,"DiskMB":10000},`+
			`"Drivers":{"exec":{"Detected":true,"Healthy":true}}}`, id, id), http.StatusOK)
		mustCall(t, a, "PUT", "/v1/client/"+id+"/heartbeat", `{"Status":"ready"}`, http.StatusOK)
	}
}

// registerBatch registers a batch job needing more memory than any node
// here has, so a scheduler can only block its eval.
func registerBatch(t *testing.T, a *agent.Agent, id string) {
	t.Helper()
	mustCall(t, a, "PUT", "/v1/jobs", fmt.Sprintf(`{"Job":{"ID":%q,"Name":%q,"Type":"batch","Datacenters":["dc1"],`+
		`"TaskGroups":[{"Name":"main","Count":1,"Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},`+
		`"Resources":{"CPU":100,"MemoryMB":1000000}}]}]}}`, id, id), http.StatusOK)
}

// logState is what an operation with no side effects leaves alone.
type logState struct {
	RaftLastIndex, Applied, Archived uint64
	Checksums                        map[string][32]byte
}

func stateOf(t *testing.T, a *agent.Agent) logState {
	t.Helper()
	last, err := strconv.ParseUint(a.Node().Stats()["last_log_index"], 10, 64)
	if err != nil {
		t.Fatalf("raft last_log_index: %v", err)
	}
	snap := a.Store().Snapshot()
	defer snap.Close()
	return logState{RaftLastIndex: last, Applied: projectionstest.AppliedIndex(t, snap),
		Archived: projectionstest.ArchiveLen(t, snap), Checksums: projectionstest.Checksums(t, snap, a.FSM().Projections())}
}

// sameState fails t when b differs from a, naming what moved.
func sameState(t *testing.T, what string, a, b logState) {
	t.Helper()
	if a.RaftLastIndex != b.RaftLastIndex {
		t.Errorf("%s: the raft log's last index moved from %d to %d: something was appended", what, a.RaftLastIndex, b.RaftLastIndex)
	}
	if a.Applied != b.Applied {
		t.Errorf("%s: the applied index moved from %d to %d", what, a.Applied, b.Applied)
	}
	if a.Archived != b.Archived {
		t.Errorf("%s: the archive went from %d to %d events", what, a.Archived, b.Archived)
	}
	for name, sum := range a.Checksums {
		if b.Checksums[name] != sum {
			t.Errorf("%s: projection %s changed", what, name)
		}
	}
}

// quiesce waits until nothing is left for the leader's processors to do
// (the scheduler settled, when it runs) and returns the applied index.
func quiesce(t *testing.T, a *agent.Agent) uint64 {
	t.Helper()
	return replay.WaitSettled(t, a.Store(), a.FSM().Notifier(), 30*time.Second)
}

// TestTimeTravelAppendsNothing runs with the versions store fed from the
// log's start, and with one created on a server that already had history
// (after a restart), so backfilled by a replay of the archive.
func TestTimeTravelAppendsNothing(t *testing.T) {
	t.Run("versions", func(t *testing.T) { testTimeTravelAppendsNothing(t, false) })
	t.Run("backfill", func(t *testing.T) { testTimeTravelAppendsNothing(t, true) })
}

func testTimeTravelAppendsNothing(t *testing.T, backfill bool) {
	a := startSafetyAgent(t, func(c *agent.Config) {
		c.Scheduler.Disabled, c.DisablePeriodic = true, true
		c.TimeTravel.DisableVersions = backfill // the store is created after the history
	})
	readyNodes(t, a, 3)
	for i := range 6 {
		mustCall(t, a, "PUT", fmt.Sprintf("/v1/namespace/team-%d", i), fmt.Sprintf(`{"Name":"team-%d"}`, i), http.StatusOK)
	}
	registerBatch(t, a, "report") // its eval stays pending: no scheduler
	if backfill {
		dir := a.DataDir()
		stop(t, a)
		a = startSafetyAgent(t, func(c *agent.Config) {
			c.Scheduler.Disabled, c.DisablePeriodic = true, true
			c.DataDir = dir
		})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.TimeTravel().WaitBackfilled(ctx); err != nil {
			t.Fatalf("waiting for the backfill: %v", err)
		}
		if n := testmetric.Value(t, a.Registry(), "ordo_timetravel_backfills_total"); n != 1 {
			t.Errorf("%v backfills, want 1", n)
		}
	}
	applied := a.FSM().Applied()
	_, wake := a.FSM().Notifier().Applied()
	before := stateOf(t, a)

	// Reads of past states across the whole log, from the versions store.
	paths := []string{"/v1/nodes", "/v1/namespaces", "/v1/jobs", "/v1/evaluations", "/v1/job/report/evaluations",
		"/v1/history/job/default/report", "/v1/history/node/node-1", "/v1/node/node-2/allocations"}
	for at := uint64(1); at <= applied; at++ {
		for _, p := range paths {
			code, body := call(t, a, "GET", fmt.Sprintf("%s?at_index=%d", p, at), "")
			if code != http.StatusOK && code != http.StatusNotFound {
				t.Fatalf("GET %s at %d: %d %s", p, at, code, body)
			}
		}
	}
	if code, body := call(t, a, "GET", "/v1/nodes?at_time="+time.Now().Add(-time.Millisecond).UTC().Format(time.RFC3339Nano), ""); code != http.StatusOK {
		t.Fatalf("at_time: %d %s", code, body)
	}
	// Writes on a historical view are refused with 400 naming the parameter.
	for _, w := range []struct{ method, path, body, field string }{
		{"PUT", "/v1/namespace/drill?at_index=2", `{"Name":"drill"}`, "at_index"},
		{"PUT", "/v1/jobs?at_time=2000-01-01T00:00:00Z", `{}`, "at_time"},
		{"PUT", "/v1/client/node-1/heartbeat?at_index=2", `{"Status":"ready"}`, "at_index"},
		{"POST", "/v1/operator/projections/rebuild?at_index=2", `{}`, "at_index"},
	} {
		code, body := call(t, a, w.method, w.path, w.body)
		var e struct{ Field string }
		_ = json.Unmarshal([]byte(body), &e)
		if code != http.StatusBadRequest || e.Field != w.field {
			t.Errorf("%s %s: %d %s; want 400 naming %s", w.method, w.path, code, body, w.field)
		}
	}

	sameState(t, "time travel", before, stateOf(t, a))
	// No live watcher woke: processors, the event stream and blocking
	// queries learn of applied entries from the live notifier, and time
	// travel's replays must not publish to it.
	select {
	case <-wake:
		t.Error("a historical read woke the live server's watchers (processors follow them)")
	default:
	}
	// The path the test means to cover was taken: reads from the versions
	// store.
	if fromVersions := testmetric.Value(t, a.Registry(), "ordo_timetravel_versions_reads_total"); fromVersions == 0 {
		t.Errorf("%v reads from versions; want every read from versions", fromVersions)
	}
}

func TestRebuildAppendsNothing(t *testing.T) {
	a := startSafetyAgent(t, func(c *agent.Config) { c.Scheduler.Disabled, c.DisablePeriodic = true, true })
	readyNodes(t, a, 3)
	for i := range 4 {
		mustCall(t, a, "PUT", fmt.Sprintf("/v1/namespace/team-%d", i), fmt.Sprintf(`{"Name":"team-%d"}`, i), http.StatusOK)
	}
	registerBatch(t, a, "report")
	before := stateOf(t, a)
	job := rebuildAll(t, a)
	if job.Events < before.Archived {
		t.Errorf("the rebuild replayed %d events of %d", job.Events, before.Archived)
	}
	sameState(t, "online rebuild", before, stateOf(t, a))
	var ev []struct{ Status string }
	if err := json.Unmarshal([]byte(mustCall(t, a, "GET", "/v1/job/report/evaluations", "", http.StatusOK)), &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev) != 1 || ev[0].Status != events.EvalStatusPending {
		t.Errorf("the job's evals after the rebuild: %+v; want one, pending", ev)
	}
}

// rebuildJob is the part of GET /v1/operator/projections/job the tests read.
type rebuildJob struct {
	ID     uint64
	State  string
	Events uint64
	Error  string
}

// rebuildAll runs an online rebuild of every projection over the API and
// waits for it to end.
func rebuildAll(t *testing.T, a *agent.Agent) rebuildJob {
	t.Helper()
	var started rebuildJob
	if err := json.Unmarshal([]byte(mustCall(t, a, "POST", "/v1/operator/projections/rebuild", `{}`, http.StatusAccepted)), &started); err != nil {
		t.Fatal(err)
	}
	var j rebuildJob
	if !waittest.Poll(60*time.Second, func() bool {
		j = rebuildJob{}
		if err := json.Unmarshal([]byte(mustCall(t, a, "GET", "/v1/operator/projections/job", "", http.StatusOK)), &j); err != nil {
			t.Fatal(err)
		}
		return j.ID == started.ID && (j.State == fsm.JobDone || j.State == fsm.JobFailed)
	}) {
		t.Fatalf("the rebuild did not end: %+v", j)
	}
	if j.State == fsm.JobFailed {
		t.Fatalf("rebuild failed: %s", j.Error)
	}
	return j
}

// TestRebuildDoesNotFeedProcessors: a job whose eval was pending, then
// blocked (no node can fit it), is replayed by an online rebuild while
// the scheduler runs. Were the replay to reach a processor, the eval feed
// would enqueue the replayed pending eval and a worker would decide it
// again, appending a new blocked eval; and the broker would hold it. A
// second job registered after the rebuild is the barrier: once the
// scheduler has settled it, the feed has handled everything before it,
// including the rebuild's wake-up of every watcher.
func TestRebuildDoesNotFeedProcessors(t *testing.T) {
	a := startSafetyAgent(t, func(c *agent.Config) { c.Scheduler.Workers, c.DisablePeriodic = 1, true })
	registerBatch(t, a, "stuck")
	quiesce(t, a)
	stuckBefore := evalsOf(t, a, "stuck")
	if len(stuckBefore) != 2 || !strings.Contains(strings.Join(stuckBefore, " "), events.EvalStatusBlocked) {
		t.Fatalf("evals of stuck: %v; want the first complete and a blocked one", stuckBefore)
	}
	checkBrokerEmpty(t, a, "before the rebuild")
	from := a.FSM().Applied()

	rebuildAll(t, a)
	registerBatch(t, a, "barrier")
	quiesce(t, a)

	if got := evalsOf(t, a, "stuck"); strings.Join(got, " ") != strings.Join(stuckBefore, " ") {
		t.Errorf("evals of stuck after the rebuild: %v; before: %v (the replay reached the scheduler)", got, stuckBefore)
	}
	// Every event after the rebuild is about the barrier job.
	snap := a.Store().Snapshot()
	defer snap.Close()
	if err := archive.Scan(snap, from+1, 0, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		if job := ev.Key(events.KindJob); job != "barrier" {
			t.Errorf("event %d/%d %s (job %q) appended after the rebuild; only the barrier job's are expected", index, seq, ev.Type, job)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	checkBrokerEmpty(t, a, "after the rebuild")
}

// evalsOf lists a job's evals as "id:status:modify index", sorted by id.
func evalsOf(t *testing.T, a *agent.Agent, job string) []string {
	t.Helper()
	snap := a.Store().Snapshot()
	defer snap.Close()
	var out []string
	if err := evals.Scan(projections.NewView(snap), evals.Query{}, func(e *evals.Eval) error {
		if e.JobID == job {
			out = append(out, fmt.Sprintf("%s:%s:%d", e.ID, e.Status, e.ModifyIndex))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkBrokerEmpty waits for the eval broker to hold no eval in any state
// (ordo_broker_evals) — a worker acks its eval just after its plan is
// applied — and fails t if it does not within a few seconds.
func checkBrokerEmpty(t *testing.T, a *agent.Agent, when string) {
	t.Helper()
	// The ack has no notification to wait on.
	if !waittest.Poll(10*time.Second, func() bool { return brokerHolds(t, a) == "" }) {
		t.Errorf("%s: the broker holds %s", when, brokerHolds(t, a))
	}
}

// brokerHolds describes the evals the broker holds, "" when none.
func brokerHolds(t *testing.T, a *agent.Agent) string {
	t.Helper()
	mfs, err := a.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen, held := false, ""
	for _, mf := range mfs {
		if mf.GetName() != "ordo_broker_evals" {
			continue
		}
		seen = true
		for _, m := range mf.GetMetric() {
			if v := m.GetGauge().GetValue(); v != 0 {
				held += fmt.Sprintf("%v %s ", v, m.GetLabel()[0].GetValue())
			}
		}
	}
	if !seen {
		t.Fatal("no ordo_broker_evals metric")
	}
	return held
}
