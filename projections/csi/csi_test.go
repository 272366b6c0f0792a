package csi_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
)

type harness struct {
	t     *testing.T
	f     *fsm.FSM
	store *kv.Store
	step  uint64
}

func newHarness(t *testing.T, projs ...projections.Projection) *harness {
	store := pt.OpenStore(t)
	if len(projs) == 0 {
		projs = all.Projections()
	}
	return &harness{t: t, f: pt.NewFSM(t, store, projs...), store: store}
}

func (h *harness) apply(ps ...events.Payload) {
	h.t.Helper()
	h.step++
	if res := pt.ApplyOne(h.t, h.f, h.step, pt.Entry(h.t, "", ps...)); res.Err != nil {
		h.t.Fatal(res.Err)
	}
}

func (h *harness) view() projections.View { return projections.NewView(h.store) }

func (h *harness) volume(ns, id string) *csi.Volume {
	h.t.Helper()
	v, err := csi.GetVolume(h.view(), ns, id)
	if err != nil {
		h.t.Fatalf("volume %s: %v", id, err)
	}
	return v
}

func (h *harness) plugin(id string) *csi.Plugin {
	h.t.Helper()
	p, err := csi.GetPlugin(h.view(), id)
	if err != nil {
		h.t.Fatalf("plugin %s: %v", id, err)
	}
	return p
}

func vol(id string, mode string) *events.CSIVolumeRegistered {
	return &events.CSIVolumeRegistered{Volume: events.CSIVolume{ID: id, Namespace: "default", PluginID: "hostpath",
		ExternalID:            "ext-" + id,
		RequestedCapabilities: []events.CSIVolumeCapability{{AccessMode: mode, AttachmentMode: events.CSIAttachmentFilesystem}},
		Parameters:            map[string]string{"tier": "slow"}}, Secrets: map[string]string{"token": "t1"}}
}

// dbJob asks for volume source (per alloc when perAlloc) in group "db".
func dbJob(id, source string, perAlloc bool, count int) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Namespace: "default", Type: events.JobTypeService,
		TaskGroups: []events.TaskGroup{{Name: "db", Count: count,
			Volumes: map[string]*events.VolumeRequest{"data": {Name: "data", Type: events.VolumeTypeCSI, Source: source,
				AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem, PerAlloc: perAlloc}},
			Tasks: []events.Task{{Name: "db", Driver: "exec"}}}}}}
}

func alloc(id, job, node string, index int) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", JobID: job, TaskGroup: "db", NodeID: node,
		Name: job + ".db[" + itoa(index) + "]", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}
}

func itoa(i int) string { return string(rune('0' + i)) }

func placed(as ...events.Allocation) *events.AllocsPlaced {
	return &events.AllocsPlaced{EvalID: "e1", Allocs: as}
}

// TestRegisterMergeKeepsClaims (N18): a second register changes the
// user-settable fields and leaves the claims (server-controlled) alone.
func TestRegisterMergeKeepsClaims(t *testing.T) {
	h := newHarness(t)
	h.apply(vol("db", events.CSIAccessSingleNodeWriter), dbJob("app", "db", false, 1))
	h.apply(placed(alloc("a1", "app", "n1", 0)))
	if got := h.volume("default", "db").Claims; len(got) != 1 || got[0].AllocID != "a1" || got[0].State != events.CSIClaimTaken || got[0].Mode != events.CSIClaimWrite {
		t.Fatalf("claims after placement: %+v", got)
	}
	again := vol("db", events.CSIAccessSingleNodeWriter)
	again.Volume.Parameters = map[string]string{"tier": "fast"}
	h.apply(again)
	v := h.volume("default", "db")
	if v.Parameters["tier"] != "fast" {
		t.Errorf("parameters not merged: %v", v.Parameters)
	}
	if len(v.Claims) != 1 || v.Claims[0].AllocID != "a1" || v.Claims[0].State != events.CSIClaimTaken {
		t.Errorf("re-register lost the claims: %+v", v.Claims)
	}
}

// TestPerAllocClaims: a per-alloc request claims "<source>[index]".
func TestPerAllocClaims(t *testing.T) {
	h := newHarness(t)
	h.apply(vol("db[0]", events.CSIAccessSingleNodeWriter), vol("db[1]", events.CSIAccessSingleNodeWriter), dbJob("app", "db", true, 2))
	h.apply(placed(alloc("a0", "app", "n1", 0), alloc("a1", "app", "n2", 1)))
	for id, want := range map[string]string{"db[0]": "a0", "db[1]": "a1"} {
		if c := h.volume("default", id).Claims; len(c) != 1 || c[0].AllocID != want {
			t.Errorf("%s claims %+v, want %s's", id, c, want)
		}
	}
}

// TestGCdAllocClaimBecomesPast (N22): the claim of an allocation that is
// garbage collected becomes a past claim for the watcher, with the access
// mode it was made in even though the volume's modes changed since.
func TestGCdAllocClaimBecomesPast(t *testing.T) {
	h := newHarness(t)
	h.apply(vol("db", events.CSIAccessSingleNodeWriter), dbJob("app", "db", false, 1))
	h.apply(placed(alloc("a1", "app", "n1", 0)))
	h.apply(vol("db", events.CSIAccessMultiNodeMultiW)) // the volume's mode changes
	h.apply(&events.AllocsDeleted{IDs: []string{"a1"}})
	v := h.volume("default", "db")
	want := []events.CSIVolumeClaim{{AllocID: "a1", NodeID: "n1", Namespace: "default", JobID: "app", Mode: events.CSIClaimWrite,
		AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem, State: events.CSIClaimUnpublishing}}
	if !reflect.DeepEqual(v.Past(), want) {
		t.Fatalf("past claims %+v\nwant %+v", v.Past(), want)
	}
	// The watcher frees it.
	c := want[0]
	c.State = events.CSIClaimFreed
	h.apply(&events.CSIVolumeClaimsUpdated{Namespace: "default", VolumeID: "db", Claims: []events.CSIVolumeClaim{c}})
	if got := h.volume("default", "db").Claims; len(got) != 0 {
		t.Fatalf("claims after free: %+v", got)
	}
}

// TestClaimPastOnRead (N22): claims whose allocation the allocs projection
// does not have are past claims on read, whoever reads them.
func TestClaimPastOnRead(t *testing.T) {
	h := newHarness(t, csi.Projection{}) // no allocs projection: no allocation exists
	h.apply(vol("db", events.CSIAccessSingleNodeWriter), dbJob("app", "db", false, 1))
	h.apply(placed(alloc("a1", "app", "n1", 0)))
	if c := h.volume("default", "db").Claims; len(c) != 1 || c[0].State != events.CSIClaimUnpublishing || c[0].AccessMode != events.CSIAccessSingleNodeWriter {
		t.Fatalf("a claim of a missing allocation reads as %+v, want past (unpublishing)", c)
	}
	var seen []events.CSIVolumeClaim
	if err := csi.ScanVolumes(h.view(), csi.VolumeQuery{Namespace: "default"}, func(v *csi.Volume) error {
		seen = append(seen, v.Claims...)
		return nil
	}); err != nil || len(seen) != 1 || seen[0].State != events.CSIClaimUnpublishing {
		t.Fatalf("scan: %+v, %v", seen, err)
	}
}

// TestClientTerminalClaimBecomesPast: a claim stays taken while its
// allocation is only desired stopped, and becomes past when the client
// reports it stopped.
func TestClientTerminalClaimBecomesPast(t *testing.T) {
	h := newHarness(t)
	h.apply(vol("db", events.CSIAccessSingleNodeWriter), dbJob("app", "db", false, 1))
	h.apply(placed(alloc("a1", "app", "n1", 0)))
	h.apply(&events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{{ID: "a1", DesiredStatus: events.AllocDesiredStop}}})
	if c := h.volume("default", "db").Claims; c[0].State != events.CSIClaimTaken {
		t.Fatalf("desired stop alone released the claim: %+v", c)
	}
	h.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}})
	if c := h.volume("default", "db").Claims; c[0].State != events.CSIClaimUnpublishing {
		t.Fatalf("client complete: %+v", c)
	}
}

func pluginJob(id string, count int, stop bool) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Namespace: "default", Type: events.JobTypeService, Stop: stop,
		TaskGroups: []events.TaskGroup{{Name: "nodes", Count: count, Tasks: []events.Task{{Name: "plugin", Driver: "exec",
			CSIPluginConfig: &events.TaskCSIPluginConfig{ID: "hostpath", Type: events.CSIPluginTypeMonolith}}}}}}}
}

func pluginNode(id, allocID string, caps ...string) *events.NodeRegistered {
	info := func() *events.CSIInfo {
		return &events.CSIInfo{PluginID: "hostpath", AllocID: allocID, Healthy: true, Provider: "ordo.hostpath", ProviderVersion: "0.1",
			ControllerInfo: &events.CSIControllerInfo{Capabilities: caps}, NodeInfo: &events.CSINodeInfo{ID: id}}
	}
	return &events.NodeRegistered{Node: events.Node{ID: id, Name: id, Status: events.NodeStatusReady,
		CSIControllerPlugins: map[string]*events.CSIInfo{"hostpath": info()},
		CSINodePlugins:       map[string]*events.CSIInfo{"hostpath": info()}}}
}

// TestExpectedFollowsJobStatus (N21): a plugin's expected counts come from
// its job's registration: the allocations of a drained node stopping do
// not change them; the job stopping does.
func TestExpectedFollowsJobStatus(t *testing.T) {
	h := newHarness(t)
	h.apply(pluginJob("plugin", 2, false))
	h.apply(pluginNode("n1", "p1"), pluginNode("n2", "p2"))
	h.apply(placed(events.Allocation{ID: "p1", Namespace: "default", JobID: "plugin", TaskGroup: "nodes", NodeID: "n1", Name: "plugin.nodes[0]",
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}))
	p := h.plugin("hostpath")
	if p.NodesExpected != 2 || p.ControllersExpected != 2 || p.NodesHealthy != 2 || p.ControllersHealthy != 2 {
		t.Fatalf("plugin %+v", p)
	}
	// n1 drains: its plugin allocation is stopped and completes.
	h.apply(&events.NodeDrainUpdated{ID: "n1", DrainStrategy: &events.DrainStrategy{Deadline: 1}})
	h.apply(&events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{{ID: "p1", DesiredStatus: events.AllocDesiredStop}}})
	h.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "p1", ClientStatus: events.AllocClientComplete}}})
	if p := h.plugin("hostpath"); p.NodesExpected != 2 || p.ControllersExpected != 2 {
		t.Fatalf("a drained allocation changed the expected counts: %+v", p)
	}
	h.apply(&events.JobDeregistered{Namespace: "default", ID: "plugin"})
	if p := h.plugin("hostpath"); p.NodesExpected != 0 || p.ControllersExpected != 0 || p.NodesHealthy != 2 {
		t.Fatalf("after the job stopped: %+v", p)
	}
}

// TestJobOfUnregisteredPlugin (N19): deleting a plugin job whose plugin
// never registered is no error, and leaves no plugin behind.
func TestJobOfUnregisteredPlugin(t *testing.T) {
	h := newHarness(t)
	h.apply(pluginJob("plugin", 1, false))
	h.apply(&events.JobDeregistered{Namespace: "default", ID: "plugin", Purge: true})
	if _, err := csi.GetPlugin(h.view(), "hostpath"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("plugin after purge: %v", err)
	}
	h.apply(&events.JobDeregistered{Namespace: "default", ID: "never-a-plugin", Purge: true})
}

// TestCapabilitiesSorted (N16): capabilities are stored sorted whatever
// order the node reported them in; plugins list by id prefix (N19).
func TestCapabilitiesSorted(t *testing.T) {
	h := newHarness(t)
	h.apply(pluginNode("n1", "p1", "PUBLISH_UNPUBLISH_VOLUME", "CREATE_DELETE_VOLUME", "LIST_VOLUMES"))
	got := h.plugin("hostpath").Controllers["n1"].ControllerInfo.Capabilities
	if want := []string{"CREATE_DELETE_VOLUME", "LIST_VOLUMES", "PUBLISH_UNPUBLISH_VOLUME"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("capabilities %v, want %v", got, want)
	}
	var ids []string
	for _, prefix := range []string{"host", "x"} {
		if err := csi.ScanPlugins(h.view(), prefix, func(p *csi.Plugin) error { ids = append(ids, prefix+":"+p.ID); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(ids, []string{"host:hostpath"}) {
		t.Fatalf("prefix scans: %v", ids)
	}
	// A node going down makes its instances unhealthy; deregistering it
	// removes them and the plugin with them.
	h.apply(&events.NodeStatusUpdated{ID: "n1", Status: events.NodeStatusDown})
	if p := h.plugin("hostpath"); p.NodesHealthy != 0 {
		t.Fatalf("down node's plugin healthy: %+v", p)
	}
	h.apply(&events.NodeDeregistered{ID: "n1"})
	if _, err := csi.GetPlugin(h.view(), "hostpath"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("plugin of a deregistered node: %v", err)
	}
}

// TestVolumeIDsExactAndPrefixes (N19): get is by exact id (a shorter id
// that prefixes another is its own volume); a list with namespace * and a
// prefix applies both.
func TestVolumeIDsExactAndPrefixes(t *testing.T) {
	h := newHarness(t)
	other := vol("db-prod", events.CSIAccessSingleNodeWriter)
	other.Volume.Namespace = "prod"
	h.apply(&events.NamespaceUpserted{Namespace: events.Namespace{Name: "prod"}})
	h.apply(vol("db", events.CSIAccessSingleNodeWriter), vol("db-2", events.CSIAccessSingleNodeWriter), vol("web", events.CSIAccessSingleNodeWriter), other)
	if _, err := csi.GetVolume(h.view(), "default", "d"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("get by prefix: %v", err)
	}
	if v := h.volume("default", "db"); v.ID != "db" {
		t.Fatalf("got %s", v.ID)
	}
	var got []string
	if err := csi.ScanVolumes(h.view(), csi.VolumeQuery{Namespace: csi.AllNamespaces, Prefix: "db"}, func(v *csi.Volume) error {
		got = append(got, v.Namespace+"/"+v.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"default/db", "default/db-2", "prod/db-prod"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("namespace * prefix db: %v, want %v", got, want)
	}
	h.apply(&events.CSIVolumeDeregistered{Namespace: "default", ID: "db"})
	if _, err := csi.GetVolume(h.view(), "default", "db-2"); err != nil {
		t.Fatalf("deregistering db removed db-2: %v", err)
	}
	if n, err := csi.CountVolumes(h.view(), "default"); err != nil || n != 2 {
		t.Fatalf("count %d, %v", n, err)
	}
}

// TestRebuildEqualsLive: replaying the archive of a scenario touching
// every CSI path yields the same CSI tables as the live apply.
func TestRebuildEqualsLive(t *testing.T) {
	h := newHarness(t)
	h.apply(pluginJob("plugin", 2, false), pluginNode("n1", "p1", "B", "A"), pluginNode("n2", "p2"))
	h.apply(vol("db[0]", events.CSIAccessSingleNodeWriter), vol("db[1]", events.CSIAccessMultiNodeMultiW), dbJob("app", "db", true, 2))
	h.apply(placed(alloc("a0", "app", "n1", 0), alloc("a1", "app", "n2", 1)))
	h.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a0", ClientStatus: events.AllocClientFailed}}})
	h.apply(&events.AllocsDeleted{IDs: []string{"a1"}}, &events.NodeStatusUpdated{ID: "n2", Status: events.NodeStatusDown})
	h.apply(&events.JobDeregistered{Namespace: "default", ID: "plugin"})
	dst := pt.OpenStore(t)
	if _, err := rebuild.Rebuild(h.store, dst, all.Projections(), 0, nil); err != nil {
		t.Fatal(err)
	}
	live, rebuilt := pt.Checksums(t, h.store, []projections.Projection{csi.Projection{}}), pt.Checksums(t, dst, []projections.Projection{csi.Projection{}})
	if !reflect.DeepEqual(live, rebuilt) {
		t.Fatalf("rebuild differs: live %x rebuilt %x", live, rebuilt)
	}
}
