package rebuild_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/ordoplane/ordo/events"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// schedulingLogs returns n raft log entries of a scheduling workload:
// nodes, jobs registered again and again, evals, allocations placed under
// new ids and updated by their clients; in its last sixth allocations are
// also deleted and jobs purged, so the tables a rebuild only wrote until
// then (the allocations' indexes) are read from there on.
func schedulingLogs(t testing.TB, rng *rand.Rand, n int) []raftlog.Log {
	t.Helper()
	logs := make([]raftlog.Log, 0, n)
	placed := 0
	for i := 1; i <= n; i++ {
		node := fmt.Sprint("node-", rng.Intn(8))
		ns, job := fmt.Sprint("ns-", rng.Intn(3)), fmt.Sprint("job-", rng.Intn(12))
		var ps []events.Payload
		switch r := rng.Intn(10); {
		case i <= 8:
			ps = append(ps, &events.NodeRegistered{Node: events.Node{ID: fmt.Sprint("node-", i-1), Name: "n", Datacenter: "dc1",
				NodePool: "default", Status: events.NodeStatusReady}})
		case r < 2:
			ps = append(ps, &events.JobRegistered{Job: events.Job{ID: job, Name: job, Namespace: ns, Type: events.JobTypeService,
				Priority: 50, Version: uint64(rng.Intn(4)), TaskGroups: []events.TaskGroup{{Name: "web", Count: 2}}}},
				&events.EvalsUpserted{Evals: []events.Evaluation{{ID: fmt.Sprint("eval-", i), Namespace: ns, JobID: job, Status: "pending"}}})
		case r < 5:
			placed++
			ps = append(ps, &events.AllocsPlaced{EvalID: fmt.Sprint("eval-", i), Allocs: []events.Allocation{{
				ID: fmt.Sprint("alloc-", placed), Namespace: ns, EvalID: fmt.Sprint("eval-", i), Name: job + ".web[0]", NodeID: node,
				JobID: job, TaskGroup: "web", Resources: events.Resources{CPU: 100, MemoryMB: 64},
				DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}}})
		case r < 8 && placed > 0:
			ps = append(ps, &events.AllocsClientUpdated{NodeID: node, Updates: []events.AllocClientUpdate{{
				ID: fmt.Sprint("alloc-", 1+rng.Intn(placed)), ClientStatus: events.AllocClientRunning}}})
		case i > 5*n/6 && r < 9 && placed > 0:
			ps = append(ps, &events.AllocsDeleted{IDs: []string{fmt.Sprint("alloc-", 1+rng.Intn(placed))}})
		case i > 5*n/6:
			ps = append(ps, &events.JobDeregistered{Namespace: ns, ID: job, Purge: true})
		default:
			ps = append(ps, &events.NodeStatusUpdated{ID: node, Status: events.NodeStatusReady, UpdatedAt: int64(i)})
		}
		e := pt.Entry(t, fmt.Sprint("cmd-", i), ps...)
		e.Time = pt.LeaderTime + int64(i)*1e6
		logs = append(logs, pt.Log(t, uint64(i), e))
	}
	return logs
}

// TestRebuildWithRowLogsEqualsLive: a from-scratch rebuild of a history
// long enough for several commits per lane (2,000 entries committed every
// 400), whose lanes keep the rows of tables they have not read in row logs
// and those they committed in row arenas, equals the live projections:
// with the logs held to the end, and with budgets so small that every
// commit writes the logs into the scratch store and the arenas forget
// what they hold at every chunk.
func TestRebuildWithRowLogsEqualsLive(t *testing.T) {
	const seed = 20261202
	rng := rand.New(rand.NewSource(seed))
	live := pt.OpenStore(t)
	applyInBatches(t, rng, pt.NewFSM(t, live), schedulingLogs(t, rng, 2000))
	want := pt.Checksums(t, live, allProjs())
	defer rebuild.SetBatchEntries(400)()
	for _, budget := range []int64{0, 1} {
		t.Run(fmt.Sprint("budget ", budget), func(t *testing.T) {
			if budget > 0 {
				defer rebuild.SetRowLogBudget(budget)()
				defer rebuild.SetRowArenaBudget(budget)()
			}
			rebuilt, _ := rebuildFrom(t, live, 0)
			for name, sum := range pt.Checksums(t, rebuilt, allProjs()) {
				if sum != want[name] {
					t.Errorf("seed %d: projection %s rebuilt with checksum %x, live %x", seed, name, sum, want[name])
				}
			}
		})
	}
}
