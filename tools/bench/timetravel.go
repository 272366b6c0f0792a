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
	"strconv"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/timetravel"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// timeTravelEvery is the checkpoint spacing of the time-travel figures, in
// entries, as a server's default; they also measure a ten times denser one.
const timeTravelEvery = 100_000

// timeTravelRows measures reads at a past index on a generated scheduling
// history of about n events, applied entry by entry through a live FSM
// while a checkpoint is taken every every/10 entries, as a server's
// TimeTravel would. Then it reads at reads random indexes (pastReads) with
// the checkpoints every every entries only, and with all of them. Each
// read is a cache miss: the newest checkpoint at or below the index copied
// to a scratch store and brought forward through the archive.
func timeTravelRows(n int, every uint64, reads int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-timetravel-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, err := kv.Open(filepath.Join(dir, "state"), kv.DefaultConfig())
	if err != nil {
		return nil, err
	}
	defer store.Close()
	fsm, err := projections.NewFSM(store, projections.FSMConfig{Projections: all.Projections()})
	if err != nil {
		return nil, err
	}
	defer fsm.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Checkpoints are taken here, not by Run; the redo log, when kept,
	// records every batch (nothing is pruned below 100,000 checkpoints).
	open := func(dataDir string, redo bool) (*timetravel.TimeTravel, error) {
		return timetravel.New(timetravel.Config{DataDir: dataDir, FSM: fsm, Projections: all.Projections(), Logger: quiet,
			Options: timetravel.Options{CheckpointsKept: 100_000, CacheSize: 1, DisableRedo: !redo, DisableVersions: true}})
	}
	dense, err := open(filepath.Join(dir, "dense"), true)
	if err != nil {
		return nil, err
	}
	defer dense.Close()
	// The versions store, with no checkpoints, fed the same batches.
	vers, err := timetravel.New(timetravel.Config{DataDir: filepath.Join(dir, "versions"), FSM: fsm, Projections: all.Projections(),
		Logger: quiet, Options: timetravel.Options{DisableCheckpoints: true, CacheSize: 1}})
	if err != nil {
		return nil, err
	}
	defer vers.Close()
	redoHook, versHook := dense.CommitHook(), vers.CommitHook()
	fsm.SetCommitHook(func(c projections.Commit) { redoHook(c); versHook(c) })
	fine := max(1, every/10)
	var takes []time.Duration
	t0 := time.Now()
	evs, err := schedulingHistory(n, fine, func(logs []raftlog.Log) error {
		fsm.Apply(logs)
		if fsm.Applied()%fine != 0 {
			return nil
		}
		t := time.Now()
		_, err := dense.Checkpoint()
		takes = append(takes, time.Since(t))
		return err
	})
	if err != nil {
		return nil, err
	}
	applied := fsm.Applied()
	fmt.Fprintf(os.Stderr, "bench: time travel history of %d events in %d entries generated in %s, %d checkpoints\n",
		evs, applied, time.Since(t0).Round(time.Second), len(dense.Checkpoints()))

	// The sparse set: the dense set's checkpoints at multiples of every,
	// copied (tables hard-linked) into another data directory.
	sparseDir := filepath.Join(dir, "sparse")
	if err := os.MkdirAll(filepath.Join(sparseDir, "checkpoints"), 0o755); err != nil {
		return nil, err
	}
	for _, c := range dense.Checkpoints() {
		if c%every == 0 {
			name := strconv.FormatUint(c, 10)
			err := kv.CopyCheckpoint(filepath.Join(dir, "dense", "checkpoints", name), filepath.Join(sparseDir, "checkpoints", name))
			if err != nil {
				return nil, err
			}
		}
	}
	sparse, err := open(sparseDir, false)
	if err != nil {
		return nil, err
	}
	defer sparse.Close()

	rng := rand.New(rand.NewSource(1))
	at := make([]uint64, reads)
	for i := range at {
		at[i] = 1 + uint64(rng.Int63n(int64(applied)))
	}
	rows := []row{
		{"time travel: history", float64(evs), "events"},
		{"time travel: history", float64(applied), "entries"},
	}
	live, err := dirBytes(filepath.Join(dir, "state"))
	if err != nil {
		return nil, err
	}
	rows = append(rows,
		row{"time travel: live state store (archive and projections)", float64(live) / (1 << 20), "MiB"},
		row{fmt.Sprintf("time travel: checkpoints every %d over the whole history, disk", fine), float64(dense.CheckpointBytes()) / (1 << 20), "MiB"},
		row{"time travel: redo log over the whole history, disk", float64(dense.RedoBytes()) / (1 << 20), "MiB"})
	// The versions writer may lag the FSM.
	t0 = time.Now()
	for vers.VersionsLag() > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	rows = append(rows,
		row{"time travel: versions store caught up after the history", float64(time.Since(t0).Nanoseconds()) / 1e6, "ms"},
		row{"time travel: versions store over the whole history, disk", float64(vers.VersionsBytes()) / (1 << 20), "MiB"})
	measure := func(tt *timetravel.TimeTravel, label string) error {
		for _, kind := range pastReads {
			var lat []time.Duration
			for _, i := range at {
				t := time.Now()
				if err := kind.read(tt, i); err != nil {
					return err
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			name := fmt.Sprintf("time travel: %s at a random index, %s", kind.name, label)
			rows = append(rows, row{name + ", p50", millis(percentile(lat, 0.50)), "ms"},
				row{name + ", p99", millis(percentile(lat, 0.99)), "ms"})
		}
		return nil
	}
	if err := measure(vers, "versions store"); err != nil {
		return nil, err
	}
	if err := measure(sparse, fmt.Sprintf("checkpoints every %d, events replayed", every)); err != nil {
		return nil, err
	}
	if err := measure(dense, fmt.Sprintf("checkpoints every %d, redo log", fine)); err != nil {
		return nil, err
	}
	t := time.Now()
	if err := pastReads[0].read(dense, at[len(at)-1]); err != nil { // cached
		return nil, err
	}
	hit := time.Since(t)
	// The dense checkpoints again, without the redo log: events replayed.
	dense.Close()
	noRedo, err := open(filepath.Join(dir, "dense"), false)
	if err != nil {
		return nil, err
	}
	defer noRedo.Close()
	if err := measure(noRedo, fmt.Sprintf("checkpoints every %d, events replayed", fine)); err != nil {
		return nil, err
	}
	// A versions store first opened on a server with this history (an
	// upgrade): its seed copies the live state's rows.
	t0 = time.Now()
	late, err := timetravel.New(timetravel.Config{DataDir: filepath.Join(dir, "versions-late"), FSM: fsm,
		Projections: all.Projections(), Logger: quiet, Options: timetravel.Options{DisableCheckpoints: true, CacheSize: 1}})
	if err != nil {
		return nil, err
	}
	defer late.Close()
	for len(late.VersionSpans()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	rows = append(rows, row{"time travel: versions store seeded from the live state at the end", time.Since(t0).Seconds(), "s"})
	slices.Sort(takes)
	return append(rows,
		row{"time travel: a read of a cached state", millis(hit), "ms"},
		row{"time travel: take a checkpoint, p50", millis(percentile(takes, 0.50)), "ms"},
		row{"time travel: take a checkpoint, p99", millis(percentile(takes, 0.99)), "ms"},
	), nil
}

// pastReads are the reads the figures time, each a cache miss: the
// projections its endpoint declares (as the API asks for them) brought
// forward to the index, the rows read and encoded as JSON.
var pastReads = []struct {
	name string
	read func(tt *timetravel.TimeTravel, index uint64) error
}{
	{"job and its allocations (GET /v1/job/:id, /allocations)", func(tt *timetravel.TimeTravel, index uint64) error {
		return readPast(tt, index, []string{jobs.Table, jobs.SummaryTable, jobs.VersionsTable, allocs.Table}, func(v projections.View) (any, error) {
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
		return readPast(tt, index, []string{nodes.Table, nodes.AllocUpdatesTable}, func(v projections.View) (any, error) {
			return nodes.List(v, "")
		})
	}},
	{"every projection", func(tt *timetravel.TimeTravel, index uint64) error {
		return readPast(tt, index, nil, func(v projections.View) (any, error) { return jobs.List(v, "team-7", "") })
	}},
}

// readPast reads the state at index, holding the projections owning
// tables (every one for nil), and encodes what read returns as JSON.
func readPast(tt *timetravel.TimeTravel, index uint64, tables []string, read func(projections.View) (any, error)) error {
	st, err := tt.At(context.Background(), index, tables...)
	if err != nil {
		return err
	}
	defer st.Release()
	res, err := read(st.View())
	if err != nil {
		return err
	}
	if st.Strayed() {
		return fmt.Errorf("read at %d strayed outside %v", index, tables)
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
