// Package csitest holds test helpers for CSI: a store with every
// projection and a command pipeline over it, and builders of volumes,
// plugin nodes and jobs that ask for volumes.
package csitest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

// Harness is a store with every projection, an FSM and a pipeline whose
// commands apply straight to it.
type Harness struct {
	T        testing.TB
	Store    *kv.Store
	FSM      *fsm.FSM
	Pipeline *commands.Pipeline
	n        int
}

// New returns a Harness over a fresh store.
func New(t testing.TB) *Harness {
	t.Helper()
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: f}, Store: store, Applied: f.Applied,
		Clock: clocktest.NewClock(time.Unix(1_700_000_000, 0))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return &Harness{T: t, Store: store, FSM: f, Pipeline: p}
}

// Apply appends one entry of payloads, failing on a rejection.
func (h *Harness) Apply(ps ...events.Payload) {
	h.T.Helper()
	if res := pt.ApplyOne(h.T, h.FSM, h.FSM.Applied()+1, pt.Entry(h.T, "", ps...)); res.Err != nil {
		h.T.Fatal(res.Err)
	}
}

// Run runs c through the pipeline.
func (h *Harness) Run(c commands.Command) (commands.Outcome, error) {
	h.n++
	return h.Pipeline.Run(context.Background(), fmt.Sprintf("test.%T", c), commands.Request{CommandID: "c" + strconv.Itoa(h.n)}, c)
}

// View returns a view of the store's current state.
func (h *Harness) View() projections.View { return projections.NewView(h.Store) }

// Volume returns a registration of volume id in default on plugin
// hostpath, claimable in access mode (file-system).
func Volume(id, mode string) *events.CSIVolumeRegistered {
	return &events.CSIVolumeRegistered{Volume: events.CSIVolume{ID: id, Namespace: "default", PluginID: "hostpath",
		ExternalID:            "ext-" + id,
		RequestedCapabilities: []events.CSIVolumeCapability{{AccessMode: mode, AttachmentMode: events.CSIAttachmentFilesystem}},
		Parameters:            map[string]string{"tier": "slow"}}, Secrets: map[string]string{"token": "t1"}}
}

// PluginNode registers node id (ready, exec driver, 4000 MHz, 4 GiB)
// running a healthy hostpath monolith instance in allocation allocID, in
// the topology segments given (none: everywhere).
func PluginNode(id, allocID string, segments map[string]string) *events.NodeRegistered {
	info := func() *events.CSIInfo {
		in := &events.CSIInfo{PluginID: "hostpath", AllocID: allocID, Healthy: true, Provider: "ordo.hostpath", ProviderVersion: "0.1",
			ControllerInfo: &events.CSIControllerInfo{Capabilities: []string{"CREATE_DELETE_VOLUME"}},
			NodeInfo:       &events.CSINodeInfo{ID: id}}
		if segments != nil {
			in.NodeInfo.AccessibleTopology = &events.CSITopology{Segments: segments}
		}
		return in
	}
	return &events.NodeRegistered{Node: events.Node{ID: id, Name: id, Datacenter: "dc1", Status: events.NodeStatusReady,
		Resources:            events.NodeResources{CPU: 4000, MemoryMB: 4096, DiskMB: 10000},
		Drivers:              map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}},
		CSIControllerPlugins: map[string]*events.CSIInfo{"hostpath": info()},
		CSINodePlugins:       map[string]*events.CSIInfo{"hostpath": info()}}}
}

// DBJob is a service job id whose group "db" (count) asks for volume
// source in access mode (per allocation when perAlloc).
func DBJob(id, source, mode string, perAlloc bool, count int) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Name: id, Namespace: "default", Type: events.JobTypeService, Priority: 50,
		Datacenters: []string{"dc1"},
		TaskGroups: []events.TaskGroup{{Name: "db", Count: count,
			Volumes: map[string]*events.VolumeRequest{"data": {Name: "data", Type: events.VolumeTypeCSI, Source: source,
				AccessMode: mode, AttachmentMode: events.CSIAttachmentFilesystem, PerAlloc: perAlloc}},
			Tasks: []events.Task{{Name: "db", Driver: "exec", Resources: &events.Resources{CPU: 100, MemoryMB: 64}}}}}}}
}

// Alloc is a running allocation of group db of job on node at index.
func Alloc(id, job, node string, index int) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", EvalID: "e1", JobID: job, TaskGroup: "db", NodeID: node,
		Name: job + ".db[" + strconv.Itoa(index) + "]", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
}
