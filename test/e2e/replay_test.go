package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/test/replay"
	"github.com/ordoplane/ordo/test/testagent"
)

// settleTimeout bounds each wait for the scheduler; it is a failure
// guard, not a pace.
const settleTimeout = 30 * time.Second

// startAgent starts a one-server agent with the scheduler on, data on disk
// in a temp dir, and heartbeat TTLs long enough that no node goes down
// unless the test says so; tweaks change the config further.
func startAgent(t *testing.T, tweaks ...func(*agent.Config)) (*agent.Agent, *api.Client) {
	t.Helper()
	cfg := testagent.DevConfig(t.TempDir())
	testagent.QuietNodes(&cfg)
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	return testagent.StartDev(t, cfg)
}

func settle(t *testing.T, a *agent.Agent) uint64 {
	t.Helper()
	return replay.WaitSettled(t, a.Store(), a.FSM().Notifier(), settleTimeout)
}

// readyNode registers a node and reports it ready. Every node is alike, so
// placements tie and the scheduler's seeded shuffle decides them.
func readyNode(t *testing.T, a *agent.Agent, id string) {
	t.Helper()
	testagent.ReadyNode(t, a.HTTPAddr(), id, 1000, 1024)
}

func job(kind, id string, count, cpu int) *api.Job { return testagent.SleepJob(kind, id, count, cpu) }

func register(t *testing.T, c *api.Client, j *api.Job) {
	t.Helper()
	testagent.Register(t, c, j)
}

// TestReplayReproducesEveryDecision drives a real agent through the
// scheduler's paths — service placements and a job that does not fit
// (blocked, later unblocked), a batch job, a system job, scaling up and
// down, a node going down and one joining — then re-runs every eval a
// worker completed against the snapshot it recorded and requires the
// committed plan back exactly: same allocation ids on the same nodes with
// the same resources, same stops, updates, follow-ups, blocked eval,
// queued counts and failure metrics.
//
// The nodes are identical, so nearly every placement is a tie that the
// scheduler's shuffle (seeded from the eval id, processors/scheduler
// rank.go) breaks. A scheduler drawing on unseeded randomness, map order
// or the clock would pick other nodes on the re-run and this test would
// fail; TestEvalIDSeedDecidesTies in history/rerun shows the ties are
// real: another seed moves the placements.
func TestReplayReproducesEveryDecision(t *testing.T) {
	a, c := startAgent(t)
	for i := range 4 {
		readyNode(t, a, fmt.Sprintf("n%d", i))
	}
	register(t, c, job("service", "web", 3, 100))
	register(t, c, job("service", "big", 14, 300)) // 4200 MHz of 4000: blocked
	register(t, c, job("batch", "report", 3, 100))
	register(t, c, job("system", "agent", 1, 50))
	settle(t, a)
	register(t, c, job("service", "web", 6, 100)) // scale up
	settle(t, a)
	register(t, c, job("service", "web", 2, 100)) // scale down
	settle(t, a)
	// n1 misses its heartbeat: its allocations are lost and replaced.
	if _, err := a.Pipeline().Run(context.Background(), "node.status", commands.Request{Actor: "test"},
		node.UpdateStatus{ID: "n1", Status: events.NodeStatusDown, MissedHeartbeat: true}); err != nil {
		t.Fatal(err)
	}
	settle(t, a)
	// A node joins: the blocked eval is unblocked and the system job placed there.
	readyNode(t, a, "n4")
	at := settle(t, a)

	snap := a.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	var all []*evals.Eval
	if err := evals.Scan(v, evals.Query{}, func(e *evals.Eval) error { all = append(all, e); return nil }); err != nil {
		t.Fatal(err)
	}
	records := map[string]*rerun.Record{}
	types, triggers := map[string]int{}, map[string]int{}
	rerunCount, earlier := 0, 0
	for _, e := range all {
		if e.SnapshotIndex == 0 {
			continue
		}
		rec, err := rerun.Recorded(snap, e.ID)
		if err != nil {
			t.Fatalf("eval %s: %v", e.ID, err)
		}
		records[e.ID] = rec
		if e.Status != events.EvalStatusComplete {
			// A blocked eval carries the snapshot its parent failed on;
			// no worker decided it (yet).
			if rec.Decided() {
				t.Errorf("eval %s is %s but recorded as decided at %d", e.ID, e.Status, rec.SnapshotIndex)
			}
			continue
		}
		if !rec.Decided() || rec.SnapshotIndex != e.SnapshotIndex {
			t.Errorf("eval %s: complete at snapshot %d, recorded %v at %d", e.ID, e.SnapshotIndex, rec.Decided(), rec.SnapshotIndex)
			continue
		}
		plan, err := rerun.Rerun(snap, e.ID, t.TempDir())
		if err != nil {
			t.Errorf("re-run eval %s: %v", e.ID, err)
			continue
		}
		rerunCount++
		types[e.Type]++
		triggers[e.TriggeredBy]++
		earlier += len(rec.Earlier)
		if d := rerun.Diff(rec, plan); !d.Empty() {
			t.Errorf("eval %s (%s, %s, job %s) does not reproduce:\n%s", e.ID, e.Type, e.TriggeredBy, e.JobID, d)
			continue
		}
		// The same, spelled out for placements.
		if len(plan.Placements) != len(rec.Final.Placements) {
			t.Errorf("eval %s: %d placements recomputed, %d recorded", e.ID, len(plan.Placements), len(rec.Final.Placements))
			continue
		}
		for i, p := range plan.Placements {
			r := rec.Final.Placements[i]
			if p.ID != r.ID || p.NodeID != r.NodeID || p.Resources != r.Resources || p.Name != r.Name {
				t.Errorf("eval %s placement %d: recomputed %s %s on %s %+v, recorded %s %s on %s %+v",
					e.ID, i, p.ID, p.Name, p.NodeID, p.Resources, r.ID, r.Name, r.NodeID, r.Resources)
			}
		}
	}
	t.Logf("re-ran %d of %d evals at index %d (by type %v, by trigger %v); %d earlier partial commits", rerunCount, len(all), at, types, triggers, earlier)
	for _, typ := range []string{"service", "batch", "system"} {
		if types[typ] == 0 {
			t.Errorf("no %s eval was re-run", typ)
		}
	}
	for _, trig := range []string{events.EvalTriggerJobRegister, events.EvalTriggerNodeUpdate, events.EvalTriggerQueuedAllocs} {
		if triggers[trig] == 0 {
			t.Errorf("no %s eval was re-run", trig)
		}
	}

	// Recorded missed nothing: every allocation the agent holds was placed
	// by the final or an earlier commit of the eval that names it.
	var list []*allocs.Alloc
	if err := allocs.Scan(v, allocs.Query{}, func(al *allocs.Alloc) error { list = append(list, al); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("no allocations")
	}
	for _, al := range list {
		rec := records[al.EvalID]
		if rec == nil {
			t.Errorf("alloc %s: eval %s was not recorded", al.ID, al.EvalID)
			continue
		}
		found := false
		for _, cm := range append(append([]rerun.Commit(nil), rec.Earlier...), *rec.Final) {
			for _, p := range cm.Placements {
				found = found || p.ID == al.ID && p.NodeID == al.NodeID
			}
		}
		if !found {
			t.Errorf("alloc %s on %s is in no commit recorded for eval %s", al.ID, al.NodeID, al.EvalID)
		}
	}
}
