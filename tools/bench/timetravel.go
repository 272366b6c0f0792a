package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/timetravel"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// timeTravelRows measures time travel on the generated scheduling history
// of about n events (the rebuild figures' history, kept in keep when set):
// a versions store created on the server after it (as on an upgrade) is
// seeded from the live state and backfilled from the archive, then read
// at reads random indexes (pastReads). The backfill's rate and wall time
// and the store's disk against the live store's are the figures of
// docs/history.md.
func timeTravelRows(n int, keep string, reads int) ([]row, error) {
	return withKeptHistory(n, keep, func(src *kv.Store, dir string) ([]row, error) { return timeTravelFigures(src, dir, reads) })
}

// timeTravelFigures measures timeTravelRows' figures on src, with dir for
// the versions store.
func timeTravelFigures(src *kv.Store, dir string, reads int) ([]row, error) {
	f, err := fsm.New(src, fsm.Config{Projections: all.Projections(), AllowStale: true})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	applied := f.Applied()
	archived, err := archive.Len(src)
	if err != nil {
		return nil, err
	}
	live, err := dirBytes(src.Dir())
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	t0 := time.Now()
	tt, err := timetravel.New(timetravel.Config{DataDir: dir, FSM: f, Projections: all.Projections(), Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer tt.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tt.Run(ctx) }()
	defer func() { cancel(); <-done }()
	// The seed is the first thing the writer does; the backfill follows.
	for len(tt.VersionSpans()) == 0 {
		time.Sleep(time.Millisecond)
	}
	seeded := time.Since(t0)
	t1, c1 := time.Now(), cpuTime()
	if err := tt.WaitBackfilled(ctx); err != nil {
		return nil, err
	}
	took, cpu := time.Since(t1), cpuTime()-c1
	vers, err := dirBytes(filepath.Join(dir, "versions"))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "bench: time travel backfill of %d events in %d entries took %s\n",
		archived, applied, took.Round(time.Millisecond))
	rows := []row{
		{"time travel: history", float64(archived), "events"},
		{"time travel: history", float64(applied), "entries"},
		{"time travel: live state store (archive and projections), disk", float64(live) / (1 << 20), "MiB"},
		{"time travel: versions store seeded from the live state at the end", seeded.Seconds(), "s"},
		{"time travel: backfill of the whole history from the archive, wall", took.Seconds(), "s"},
		{"time travel: backfill of the whole history from the archive, CPU", cpu.Seconds(), "s"},
		{"time travel: backfill of the whole history from the archive", float64(archived) / took.Seconds(), "events/s"},
		{"time travel: versions store over the whole history, disk", float64(vers) / (1 << 20), "MiB"},
		{"time travel: versions store over the whole history, disk against the live store's", 100 * float64(vers) / float64(live), "%"},
	}
	rng := rand.New(rand.NewSource(1))
	at := make([]uint64, reads)
	for i := range at {
		at[i] = 1 + uint64(rng.Int63n(int64(applied)))
	}
	for _, kind := range pastReads {
		var lat []time.Duration
		for _, i := range at {
			t := time.Now()
			if err := kind.read(tt, i); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(t))
		}
		slices.Sort(lat)
		name := fmt.Sprintf("time travel: %s at a random index, versions store", kind.name)
		rows = append(rows, row{name + ", p50", millis(percentile(lat, 0.50)), "ms"},
			row{name + ", p99", millis(percentile(lat, 0.99)), "ms"})
	}
	return rows, nil
}

// pastReads are the reads the figures time: the rows an endpoint reads
// at the index, encoded as JSON.
var pastReads = []struct {
	name string
	read func(tt *timetravel.TimeTravel, index uint64) error
}{
	{"job and its allocations (GET /v1/job/:id, /allocations)", func(tt *timetravel.TimeTravel, index uint64) error {
		return readPast(tt, index, func(v projections.View) (any, error) {
			list, err := jobs.List(v, "team-7", "")
			if err != nil || len(list) == 0 {
				return list, err // early in the history: no job yet
			}
			j, err := jobs.Get(v, "team-7", list[len(list)-1].ID)
			if err != nil {
				return nil, err
			}
			as, err := allocs.ByJob(v, "team-7", j.ID)
			return []any{j, as}, err
		})
	}},
	{"node list (GET /v1/nodes)", func(tt *timetravel.TimeTravel, index uint64) error {
		return readPast(tt, index, func(v projections.View) (any, error) { return nodes.List(v, "") })
	}},
}

// readPast reads the state at index and encodes what read returns as
// JSON.
func readPast(tt *timetravel.TimeTravel, index uint64, read func(projections.View) (any, error)) error {
	st, err := tt.At(context.Background(), index)
	if err != nil {
		return err
	}
	defer st.Release()
	res, err := read(st.View())
	if err != nil {
		return err
	}
	return json.NewEncoder(io.Discard).Encode(res)
}

// schedulingHistory generates about n events of the rebuild figures' mix
// (rebuildHistory): nodes registering and changing status, namespaces,
// and jobs each registered with an eval, four allocations placed, their
// client updates and the eval completed. It hands them to apply as raft
// batches of up to 256 entries, ending a batch at every multiple of cut,
// and returns how many events it made.
func schedulingHistory(n int, cut uint64, apply func([]raftlog.Log) error) (uint64, error) {
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
		if len(logs) == batch || index%cut == 0 {
			err = apply(logs)
			logs = logs[:0]
		}
		return err
	}
	nodeID := func(i int) string { return fmt.Sprintf("node-%04d", i%nodes) }
	for i := range nodes {
		err := entry(&events.NodeRegistered{Node: events.Node{ID: nodeID(i), Name: nodeID(i), Datacenter: "dc1", NodePool: "default",
			Attributes: map[string]string{"kernel.name": "linux"}, Resources: events.NodeResources{CPU: 64000, MemoryMB: 256 << 10},
			Drivers: map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}, Status: events.NodeStatusReady}})
		if err != nil {
			return 0, err
		}
	}
	for j := 0; evs < uint64(n); j++ {
		ns := fmt.Sprintf("team-%d", j%50)
		if j < 50 {
			if err := entry(&events.NamespaceUpserted{Namespace: events.Namespace{Name: ns, Description: "bench"}}); err != nil {
				return 0, err
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
			return 0, err
		}
		placed := make([]events.Allocation, 4)
		for k := range placed {
			placed[k] = events.Allocation{ID: fmt.Sprintf("alloc-%d-%d", j, k), Namespace: ns, EvalID: evalID,
				Name: fmt.Sprintf("web.web[%d]", k), NodeID: nodeID(j*4 + k), JobID: job.ID, JobVersion: job.Version,
				TaskGroup: "web", Resources: events.Resources{CPU: 100, MemoryMB: 64},
				DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending, CreateTime: int64(j)}
		}
		eval.Status = events.EvalStatusComplete
		if err := entry(&events.AllocsPlaced{EvalID: evalID, Allocs: placed}, &events.EvalsUpserted{Evals: []events.Evaluation{eval}}); err != nil {
			return 0, err
		}
		for _, a := range placed {
			err := entry(&events.AllocsClientUpdated{NodeID: a.NodeID, Updates: []events.AllocClientUpdate{{ID: a.ID,
				ClientStatus: events.AllocClientRunning, TaskStates: map[string]*events.TaskState{"server": {State: "running"}}}}})
			if err != nil {
				return 0, err
			}
		}
		if j%100 == 0 {
			if err := entry(&events.NodeStatusUpdated{ID: nodeID(j), Status: events.NodeStatusReady, UpdatedAt: int64(j)}); err != nil {
				return 0, err
			}
		}
	}
	if len(logs) > 0 {
		return evs, apply(logs)
	}
	return evs, nil
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// dirBytes is the size of the files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}
