package csi_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/csi"
	"github.com/ordoplane/ordo/commands/csi/csitest"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pc "github.com/ordoplane/ordo/projections/csi"
)

func register(v *events.CSIVolumeRegistered) csi.Register {
	return csi.Register{Volume: v.Volume, Secrets: v.Secrets}
}

func getVolume(t *testing.T, h *csitest.Harness, id string) *pc.Volume {
	t.Helper()
	v, err := pc.GetVolume(h.View(), "default", id)
	if err != nil {
		t.Fatalf("volume %s: %v", id, err)
	}
	return v
}

func status(err error) int {
	if err == nil {
		return 200
	}
	return commands.Status(err)
}

// TestRegisterIsIdempotentMerge (N18): registering an existing volume
// again appends nothing; a register that changes user fields merges them
// and keeps the claims; unset fields keep their values; immutable fields
// and capabilities that would drop a claim are refused, and the refusals
// reach no log.
func TestRegisterIsIdempotentMerge(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "p1", nil))
	v := csitest.Volume("db", events.CSIAccessSingleNodeWriter)
	if _, err := h.Run(register(v)); err != nil {
		t.Fatal(err)
	}
	h.Apply(csitest.DBJob("app", "db", events.CSIAccessSingleNodeWriter, false, 1))
	h.Apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{csitest.Alloc("a1", "app", "n1", 0)}})
	before := getVolume(t, h, "db")

	out, err := h.Run(register(v))
	if err != nil || out.Index != h.FSM.Applied() || getVolume(t, h, "db").ModifyIndex != before.ModifyIndex {
		t.Fatalf("identical register: %+v %v (modify index %d → %d)", out, err, before.ModifyIndex, getVolume(t, h, "db").ModifyIndex)
	}

	upd := csi.Register{Volume: events.CSIVolume{ID: "db", Namespace: "default", PluginID: "hostpath",
		RequestedCapabilities: v.Volume.RequestedCapabilities, Parameters: map[string]string{"tier": "fast"}}}
	if _, err := h.Run(upd); err != nil {
		t.Fatal(err)
	}
	got := getVolume(t, h, "db")
	if got.Parameters["tier"] != "fast" || got.ExternalID != "ext-db" || got.Secrets["token"] != "t1" {
		t.Errorf("merge: parameters %v, external id %q (kept?), secrets kept %v", got.Parameters, got.ExternalID, got.Secrets["token"] == "t1")
	}
	if len(got.Claims) != 1 || got.Claims[0].AllocID != "a1" || got.Claims[0].State != events.CSIClaimTaken {
		t.Errorf("merge lost the claim: %+v", got.Claims)
	}

	applied := h.FSM.Applied()
	for _, tc := range []struct {
		name   string
		edit   func(*csi.Register)
		status int
		says   string
	}{
		{"plugin", func(r *csi.Register) { r.Volume.PluginID = "other" }, 400, "PluginID"},
		{"external id", func(r *csi.Register) { r.Volume.ExternalID = "ext-other" }, 400, "ExternalID"},
		{"bad mode", func(r *csi.Register) { r.Volume.RequestedCapabilities[0].AccessMode = "everyone" }, 400, "AccessMode"},
		{"no capability", func(r *csi.Register) { r.Volume.RequestedCapabilities = nil }, 400, "RequestedCapabilities"},
		{"capacity range", func(r *csi.Register) { r.Volume.RequestedCapacityMin, r.Volume.RequestedCapacityMax = 10, 5 }, 400, "RequestedCapacityMax"},
		{"drops a claim's mode", func(r *csi.Register) {
			r.Volume.RequestedCapabilities = []events.CSIVolumeCapability{{AccessMode: events.CSIAccessMultiNodeReader, AttachmentMode: events.CSIAttachmentFilesystem}}
		}, 409, "a1"},
	} {
		r := register(csitest.Volume("db", events.CSIAccessSingleNodeWriter))
		tc.edit(&r)
		_, err := h.Run(r)
		if status(err) != tc.status || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v (status %d), want %d naming %s", tc.name, err, status(err), tc.status, tc.says)
		}
	}
	if h.FSM.Applied() != applied {
		t.Errorf("refused registers appended entries: applied %d → %d", applied, h.FSM.Applied())
	}
}

// TestRegisterNeedsPluginAndNamespace: a volume names a registered plugin
// and an existing namespace; otherwise 400 naming the field.
func TestRegisterNeedsPluginAndNamespace(t *testing.T) {
	h := csitest.New(t)
	_, err := h.Run(register(csitest.Volume("db", events.CSIAccessSingleNodeWriter)))
	var ve *commands.ValidationError
	if !errors.As(err, &ve) || ve.Field != "PluginID" {
		t.Fatalf("no plugin: %v", err)
	}
	h.Apply(csitest.PluginNode("n1", "p1", nil))
	v := csitest.Volume("db", events.CSIAccessSingleNodeWriter)
	v.Volume.Namespace = "nowhere"
	if _, err := h.Run(register(v)); !errors.As(err, &ve) || ve.Field != "Namespace" {
		t.Fatalf("no namespace: %v", err)
	}
}

// TestDeregisterExactID (N19): deregistering "db" removes db, never
// db-2 nor a volume "d" prefixes; an unknown id is a 404 even when it
// prefixes volumes; a claimed volume is refused unless forced.
func TestDeregisterExactID(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "p1", nil))
	for _, id := range []string{"db", "db-2"} {
		if _, err := h.Run(register(csitest.Volume(id, events.CSIAccessSingleNodeWriter))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Run(csi.Deregister{Namespace: "default", ID: "d"}); status(err) != 404 {
		t.Fatalf("deregister by prefix: %v", err)
	}
	if _, err := h.Run(csi.Deregister{Namespace: "default", ID: "db"}); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.GetVolume(h.View(), "default", "db"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("db still there: %v", err)
	}
	getVolume(t, h, "db-2")

	h.Apply(csitest.DBJob("app", "db-2", events.CSIAccessSingleNodeWriter, false, 1))
	h.Apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{csitest.Alloc("a1", "app", "n1", 0)}})
	if _, err := h.Run(csi.Deregister{Namespace: "default", ID: "db-2"}); status(err) != 409 || !strings.Contains(err.Error(), "a1") {
		t.Fatalf("claimed volume: %v", err)
	}
	if _, err := h.Run(csi.Deregister{Namespace: "default", ID: "db-2", Force: true}); err != nil {
		t.Fatalf("forced: %v", err)
	}
}

// TestNamespaceGuardCountsVolumes (N9): a namespace holding a volume is
// not deleted; the error names the volumes.
func TestNamespaceGuardCountsVolumes(t *testing.T) {
	h := csitest.New(t)
	h.Apply(&events.NamespaceUpserted{Namespace: events.Namespace{Name: "team"}}, csitest.PluginNode("n1", "p1", nil))
	v := csitest.Volume("db", events.CSIAccessSingleNodeWriter)
	v.Volume.Namespace = "team"
	if _, err := h.Run(register(v)); err != nil {
		t.Fatal(err)
	}
	_, err := h.Run(namespace.Delete{Name: "team"})
	if status(err) != 409 || !strings.Contains(err.Error(), "1 volume") {
		t.Fatalf("delete of a namespace with a volume: %v", err)
	}
	if _, err := h.Run(csi.Deregister{Namespace: "team", ID: "db"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Run(namespace.Delete{Name: "team"}); err != nil {
		t.Fatalf("empty namespace: %v", err)
	}
}

// TestDetachAndUpdateClaims: detach refuses a live claim on a node that
// can report, releases it on a down node; claim updates only move forward.
func TestDetachAndUpdateClaims(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "p1", nil))
	if _, err := h.Run(register(csitest.Volume("db", events.CSIAccessMultiNodeMultiW))); err != nil {
		t.Fatal(err)
	}
	h.Apply(csitest.DBJob("app", "db", events.CSIAccessMultiNodeMultiW, false, 2))
	h.Apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{csitest.Alloc("a1", "app", "n1", 0)}})
	if _, err := h.Run(csi.Detach{Namespace: "default", ID: "db", NodeID: "n1"}); status(err) != 409 || !strings.Contains(err.Error(), "a1") {
		t.Fatalf("detach of a running claim: %v", err)
	}
	// The node goes down before its client reports: detach releases.
	h.Apply(&events.NodeStatusUpdated{ID: "n1", Status: events.NodeStatusDown})
	if _, err := h.Run(csi.Detach{Namespace: "default", ID: "db", NodeID: "n1"}); err != nil {
		t.Fatalf("detach from a down node: %v", err)
	}
	c := getVolume(t, h, "db").Claims[0]
	if c.State != events.CSIClaimUnpublishing {
		t.Fatalf("after detach: %+v", c)
	}
	c.State = events.CSIClaimNodeDetached
	if _, err := h.Run(csi.UpdateClaims{Volumes: []csi.VolumeClaims{{Namespace: "default", VolumeID: "db", Claims: []events.CSIVolumeClaim{c}}}}); err != nil {
		t.Fatal(err)
	}
	applied := h.FSM.Applied()
	c.State = events.CSIClaimUnpublishing // backwards: nothing
	if _, err := h.Run(csi.UpdateClaims{Volumes: []csi.VolumeClaims{{Namespace: "default", VolumeID: "db", Claims: []events.CSIVolumeClaim{c}}}}); err != nil || h.FSM.Applied() != applied {
		t.Fatalf("backward update: %v, applied %d → %d", err, applied, h.FSM.Applied())
	}
	if got := getVolume(t, h, "db").Claims[0].State; got != events.CSIClaimNodeDetached {
		t.Fatalf("state %s", got)
	}
}

func TestParseSpec(t *testing.T) {
	src := readFile(t, "testdata/volume.hcl")
	s, err := csi.ParseSpec("volume.hcl", src)
	if err != nil {
		t.Fatal(err)
	}
	want := events.CSIVolume{ID: "db", Name: "database", Namespace: "default", PluginID: "hostpath",
		RequestedCapacityMin: 1 << 30, RequestedCapacityMax: 2 << 30,
		RequestedCapabilities: []events.CSIVolumeCapability{{AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}},
		MountOptions:          &events.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}},
		RequestedTopologies:   &events.CSITopologyRequest{Required: []events.CSITopology{{Segments: map[string]string{"zone": "a"}}}},
		Parameters:            map[string]string{"tier": "fast"}}
	if !reflect.DeepEqual(s.Volume, want) || s.Secrets["token"] != "s3cr3t" {
		t.Fatalf("parsed %+v\nwant   %+v (secrets %v)", s.Volume, want, s.Secrets != nil)
	}
	for _, tc := range []struct{ src, says string }{
		{`id = "x"` + "\n" + `type = "csi"`, "plugin_id"},
		{strings.Replace(string(src), `"single-node-writer"`, `"sometimes"`, 1), "AccessMode"},
		{strings.Replace(string(src), `"1GiB"`, `"lots"`, 1), "capacity_min"},
		{strings.Replace(string(src), `type      = "csi"`, `type = "host"`, 1), "type"},
		{`{"ID":"x","PluginID":"p","Type":"csi"}`, "RequestedCapabilities"},
		{`{"Volumes":[]}`, "Volumes"},
		{`id = `, "volume.hcl"},
	} {
		_, err := csi.ParseSpec("volume.hcl", []byte(tc.src))
		var ve *commands.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: %v, want a validation error naming %s", tc.src, err, tc.says)
		}
	}
}

// TestNodeRegisterReportsPlugins: a node's registration carries its plugin
// instances; the same report again appends nothing (capabilities in any
// order), and a report without them removes them.
func TestNodeRegisterReportsPlugins(t *testing.T) {
	h := csitest.New(t)
	n := csitest.PluginNode("n1", "p1", nil).Node
	n.CSIControllerPlugins["hostpath"].ControllerInfo.Capabilities = []string{"LIST_VOLUMES", "CREATE_DELETE_VOLUME"}
	if _, err := h.Run(node.Register{Node: n}); err != nil {
		t.Fatal(err)
	}
	p, err := pc.GetPlugin(h.View(), "hostpath")
	if err != nil || p.NodesHealthy != 1 || p.ControllersHealthy != 1 {
		t.Fatalf("plugin %+v, %v", p, err)
	}
	applied := h.FSM.Applied()
	if _, err := h.Run(node.Register{Node: n}); err != nil || h.FSM.Applied() != applied {
		t.Fatalf("same registration appended: %v, applied %d → %d", err, applied, h.FSM.Applied())
	}
	n.CSIControllerPlugins, n.CSINodePlugins = nil, nil
	if _, err := h.Run(node.Register{Node: n}); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.GetPlugin(h.View(), "hostpath"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("plugin after the node stopped reporting it: %v", err)
	}
}
