package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/volumewatcher"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// directLog applies entries straight to the FSM (one server, no raft: the
// figures are the CSI paths', not consensus).
type directLog struct {
	mu  sync.Mutex
	fsm *fsm.FSM
}

func (l *directLog) Append(_ context.Context, data []byte) (any, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	index := l.fsm.Applied() + 1
	return l.fsm.Apply([]raftlog.Log{{Index: index, Term: 1, Data: data}})[0], index, nil
}

func (l *directLog) apply(ps ...events.Payload) error {
	e := &events.Entry{Time: time.Now().UnixNano(), Actor: "bench"}
	for i, p := range ps {
		ev, err := events.New(fmt.Sprintf("bench-%d-%d", l.fsm.Applied(), i), p)
		if err != nil {
			return err
		}
		e.Events = append(e.Events, ev)
	}
	data, err := events.EncodeEntry(e)
	if err != nil {
		return err
	}
	res, _, _ := l.Append(context.Background(), data)
	if r, ok := res.(fsm.Result); ok && r.Err != nil {
		return r.Err
	}
	return nil
}

// csiRows: n per-alloc volumes on one plugin node, a job of count n
// claiming "db[i]". Figures: claims per second through the scheduler's
// CSI feasibility and the placement's apply (one plan, one entry); then
// all n allocations stop in one entry and the volume watcher releases
// every claim: its catch-up time and releases per second. The node has
// no client API and the plugin publishes through no controller, so the
// figures are the watcher's and the log's, not a plugin's.
func csiRows(n int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-csi-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, err := kv.Open(dir, kv.Config{})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections(), Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer fsm.Close()
	lg := &directLog{fsm: fsm}
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: lg, Store: store, Applied: fsm.Applied, Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer p.Close()

	info := func() *events.CSIInfo {
		return &events.CSIInfo{PluginID: "hostpath", Healthy: true, Provider: "bench",
			ControllerInfo: &events.CSIControllerInfo{Capabilities: []string{"CREATE_DELETE_VOLUME"}}, NodeInfo: &events.CSINodeInfo{ID: "n1"}}
	}
	if err := lg.apply(&events.NodeRegistered{Node: events.Node{ID: "n1", Name: "n1", Datacenter: "dc1", Status: events.NodeStatusReady,
		Resources: events.NodeResources{CPU: 1 << 30, MemoryMB: 1 << 30}, Drivers: map[string]events.DriverInfo{"mock": {Detected: true, Healthy: true}},
		CSIControllerPlugins: map[string]*events.CSIInfo{"hostpath": info()}, CSINodePlugins: map[string]*events.CSIInfo{"hostpath": info()}}}); err != nil {
		return nil, err
	}
	for i := 0; i < n; i += 100 {
		var ps []events.Payload
		for j := i; j < min(n, i+100); j++ {
			ps = append(ps, &events.CSIVolumeRegistered{Volume: events.CSIVolume{ID: fmt.Sprintf("db[%d]", j), Namespace: "default",
				PluginID: "hostpath", ExternalID: fmt.Sprintf("db_%d_", j),
				RequestedCapabilities: []events.CSIVolumeCapability{{AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}}}})
		}
		if err := lg.apply(ps...); err != nil {
			return nil, err
		}
	}
	job := events.Job{ID: "db", Name: "db", Namespace: "default", Type: events.JobTypeService, Priority: 50, Datacenters: []string{"dc1"},
		TaskGroups: []events.TaskGroup{{Name: "db", Count: n,
			Volumes: map[string]*events.VolumeRequest{"data": {Name: "data", Type: events.VolumeTypeCSI, Source: "db", PerAlloc: true,
				AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}},
			Tasks: []events.Task{{Name: "db", Driver: "mock", Resources: &events.Resources{CPU: 1, MemoryMB: 1}}}}}}
	if err := lg.apply(&events.JobRegistered{Job: job}); err != nil {
		return nil, err
	}

	// Claim: schedule the job (CSI feasibility for every placement) and
	// commit the placements, which claims the volumes at apply.
	start := time.Now()
	snap := store.Snapshot()
	st, err := schedstate.New(projections.NewView(snap))
	if err != nil {
		snap.Close()
		return nil, err
	}
	plan, err := scheduler.Compute(st, &events.Evaluation{ID: "bench-eval", Namespace: "default", JobID: "db", Type: job.Type,
		TriggeredBy: events.EvalTriggerJobRegister, Status: events.EvalStatusPending, Priority: 50})
	snap.Close()
	if err != nil {
		return nil, err
	}
	if len(plan.Placements) != n {
		return nil, fmt.Errorf("csi bench: %d of %d placed: %v", len(plan.Placements), n, plan.FailedTGAllocs["db"])
	}
	compute := time.Since(start)
	for i := range plan.Placements {
		plan.Placements[i].ClientStatus = events.AllocClientRunning
	}
	if err := lg.apply(&events.AllocsPlaced{EvalID: "bench-eval", Allocs: plan.Placements}); err != nil {
		return nil, err
	}
	claimed := time.Since(start)
	if got := countClaims(store, false); got != n {
		return nil, fmt.Errorf("csi bench: %d claims after placement, want %d", got, n)
	}

	// Release: every allocation stops at once; the watcher catches up.
	ups := make([]events.AllocClientUpdate, n)
	for i, a := range plan.Placements {
		ups[i] = events.AllocClientUpdate{ID: a.ID, ClientStatus: events.AllocClientComplete}
	}
	if err := lg.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: ups}); err != nil {
		return nil, err
	}
	w, err := volumewatcher.New(volumewatcher.Config{Pipeline: p, State: fsm, Logger: quiet})
	if err != nil {
		return nil, err
	}
	start = time.Now()
	passes := 0
	for countClaims(store, true) > 0 {
		if _, err := w.Pass(context.Background()); err != nil {
			return nil, err
		}
		if passes++; passes > 100 {
			return nil, fmt.Errorf("csi bench: claims left after %d passes", passes)
		}
	}
	release := time.Since(start)
	return []row{
		{fmt.Sprintf("csi: schedule %d per-alloc volume placements (CSI feasibility)", n), compute.Seconds() * 1000, "ms"},
		{fmt.Sprintf("csi: claim %d per-alloc volumes (schedule + commit)", n), float64(n) / claimed.Seconds(), "claims/s"},
		{fmt.Sprintf("csi: watcher catch-up after %d allocs stop at once", n), release.Seconds() * 1000, "ms"},
		{"csi: release throughput (watcher, no plugin calls)", float64(n) / release.Seconds(), "claims/s"},
		{"csi: watcher passes to catch up", float64(passes), "passes"},
	}, nil
}

// countClaims counts the volumes' claims (only those not yet freed past
// claims when past is set, else every claim).
func countClaims(store *kv.Store, past bool) int {
	snap := store.Snapshot()
	defer snap.Close()
	n := 0
	_ = csi.ScanVolumes(projections.NewView(snap), csi.VolumeQuery{Namespace: csi.AllNamespaces}, func(v *csi.Volume) error {
		if past {
			n += len(v.Past())
		} else {
			n += len(v.Claims)
		}
		return nil
	})
	return n
}
