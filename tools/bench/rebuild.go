package main

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// rebuildHistory applies a generated scheduling history of about n events
// through the FSM into a fresh store in dir: nodes registering and changing
// status, namespaces, and jobs each registered with an eval, four
// allocations placed, their client updates and the eval completed (eight
// events in six entries per job).
func rebuildHistory(dir string, n int) (*kv.Store, uint64, error) {
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		return nil, 0, err
	}
	fsm, err := projections.NewFSM(store, projections.FSMConfig{Projections: all.Projections()})
	if err != nil {
		store.Close()
		return nil, 0, err
	}
	defer fsm.Close()
	const nodes, batch = 500, 256
	var (
		index, evs uint64
		logs       []raftlog.Log
		seq        int
	)
	entry := func(ps ...events.Payload) error {
		index++
		e := &events.Entry{Time: int64(index) * 1e6, CommandID: fmt.Sprint("c", index), Actor: "bench"}
		for _, p := range ps {
			seq++
			ev, err := events.New(fmt.Sprint("e", seq), p)
			if err != nil {
				return err
			}
			e.Events = append(e.Events, ev)
		}
		data, err := events.EncodeEntry(e)
		if err != nil {
			return err
		}
		evs += uint64(len(ps))
		logs = append(logs, raftlog.Log{Index: index, Term: 1, Data: data})
		if len(logs) == batch {
			fsm.Apply(logs)
			logs = logs[:0]
		}
		return nil
	}
	nodeID := func(i int) string { return fmt.Sprintf("node-%04d", i%nodes) }
	for i := range nodes {
		err := entry(&events.NodeRegistered{Node: events.Node{ID: nodeID(i), Name: nodeID(i), Datacenter: "dc1", NodePool: "default",
			Attributes: map[string]string{"kernel.name": "linux"}, Resources: events.NodeResources{CPU: 64000, MemoryMB: 256 << 10},
			Drivers: map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}, Status: events.NodeStatusReady}})
		if err != nil {
			return nil, 0, err
		}
	}
	for j := 0; evs < uint64(n); j++ {
		ns := fmt.Sprintf("team-%d", j%50)
		if j < 50 {
			if err := entry(&events.NamespaceUpserted{Namespace: events.Namespace{Name: ns, Description: "bench"}}); err != nil {
				return nil, 0, err
			}
		}
		job := events.Job{ID: fmt.Sprintf("job-%d", j%20000), Name: "web", Namespace: ns, Type: events.JobTypeService,
			Priority: 50, Datacenters: []string{"dc1"}, NodePool: "default", Version: uint64(j / 20000),
			TaskGroups: []events.TaskGroup{{Name: "web", Count: 4, Tasks: []events.Task{{Name: "server", Driver: "exec",
				Resources: &events.Resources{CPU: 100, MemoryMB: 64}}}}}}
		evalID := fmt.Sprintf("eval-%d", j)
		eval := events.Evaluation{ID: evalID, Namespace: ns, Priority: 50, Type: events.JobTypeService,
			TriggeredBy: events.EvalTriggerJobRegister, JobID: job.ID, Status: events.EvalStatusPending, CreateTime: int64(j)}
		if err := entry(&events.JobRegistered{Job: job}, &events.EvalsUpserted{Evals: []events.Evaluation{eval}}); err != nil {
			return nil, 0, err
		}
		allocs := make([]events.Allocation, 4)
		for k := range allocs {
			allocs[k] = events.Allocation{ID: fmt.Sprintf("alloc-%d-%d", j, k), Namespace: ns, EvalID: evalID,
				Name: fmt.Sprintf("web.web[%d]", k), NodeID: nodeID(j*4 + k), JobID: job.ID, JobVersion: job.Version,
				TaskGroup: "web", Resources: events.Resources{CPU: 100, MemoryMB: 64},
				DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending, CreateTime: int64(j)}
		}
		eval.Status = events.EvalStatusComplete
		if err := entry(&events.AllocsPlaced{EvalID: evalID, Allocs: allocs}, &events.EvalsUpserted{Evals: []events.Evaluation{eval}}); err != nil {
			return nil, 0, err
		}
		for _, a := range allocs {
			err := entry(&events.AllocsClientUpdated{NodeID: a.NodeID, Updates: []events.AllocClientUpdate{{ID: a.ID,
				ClientStatus: events.AllocClientRunning, TaskStates: map[string]*events.TaskState{"server": {State: "running"}}}}})
			if err != nil {
				return nil, 0, err
			}
		}
		if j%100 == 0 {
			if err := entry(&events.NodeStatusUpdated{ID: nodeID(j), Status: events.NodeStatusReady, UpdatedAt: int64(j)}); err != nil {
				return nil, 0, err
			}
		}
	}
	if len(logs) > 0 {
		fsm.Apply(logs)
	}
	return store, evs, nil
}

// rebuildRows measures rebuilding every projection from a generated
// history of n events: from scratch into a fresh store, and online into
// the shadow keyspace of the live store with the switch (what `ordo
// operator projections rebuild` does).
func rebuildRows(n int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-rebuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	t0 := time.Now()
	src, evs, err := rebuildHistory(dir+"/src", n)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	gen := time.Since(t0)
	fmt.Fprintf(os.Stderr, "bench: rebuild history of %d events generated in %s\n", evs, gen.Round(time.Millisecond))

	dst, err := kv.Open(dir+"/dst", kv.DefaultConfig())
	if err != nil {
		return nil, err
	}
	t0, c0 := time.Now(), cpuTime()
	st, err := projections.Rebuild(src, dst, all.Projections(), 0, nil)
	full, fullCPU := time.Since(t0), cpuTime()-c0
	dst.Close()
	if err != nil {
		return nil, err
	}

	f, err := projections.NewFSM(src, projections.FSMConfig{Projections: all.Projections(), AllowStale: true})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rb := projections.NewRebuilder(f, projections.RebuilderConfig{Clock: time.Now})
	defer rb.Close()
	t0, c0 = time.Now(), cpuTime()
	job, err := rb.Do(context.Background(), projections.JobRebuild, nil)
	online, onlineCPU := time.Since(t0), cpuTime()-c0
	if err != nil {
		return nil, err
	}
	return []row{
		{"rebuild: generated history (nodes, jobs, evals, allocs)", float64(st.Events), "events"},
		{"rebuild: every projection from scratch into a fresh store", float64(st.Events) / full.Seconds(), "events/s"},
		{"rebuild: every projection from scratch, total", full.Seconds(), "s"},
		{"rebuild: every projection from scratch, CPU per event", fullCPU.Seconds() * 1e6 / float64(st.Events), "µs"},
		{"rebuild: online into the shadow, switch included", float64(job.Events) / online.Seconds(), "events/s"},
		{"rebuild: online, total", online.Seconds(), "s"},
		{"rebuild: online, CPU per event", onlineCPU.Seconds() * 1e6 / float64(job.Events), "µs"},
	}, nil
}

// cpuTime returns the process's user and system CPU time so far: on a
// shared machine it says what a rebuild costs whatever else runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rebuildEvents is the size of the rebuild figures' generated history.
const rebuildEvents = 1_000_000
