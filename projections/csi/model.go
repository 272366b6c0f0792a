package csi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// The tables of the projection.
const (
	// VolumesTable holds one volumeRow per volume, keyed Key(ns, id).
	VolumesTable = "csi_volumes"
	// PluginsTable holds one pluginRow per plugin, keyed by plugin id.
	PluginsTable = "csi_plugins"
	// JobsTable holds, per job that asks for CSI volumes or runs a CSI
	// plugin, what apply needs of it: keyed Key(ns, job).
	JobsTable = "csi_jobs"
	// AllocsTable holds, per allocation that claims volumes, the volumes
	// it claims: keyed by allocation id.
	AllocsTable = "csi_allocs"
	// NodesTable holds, per node that runs plugins, their ids: keyed by
	// node id.
	NodesTable = "csi_nodes"
)

// AllNamespaces is the namespace argument that selects every namespace.
const AllNamespaces = "*"

// Key returns the row key of volume (or job) id in namespace ns. Namespace
// names have no slash, so the first one ends the namespace.
func Key(ns, id string) string { return ns + "/" + id }

// SplitKey returns the namespace and id of a row key.
func SplitKey(k string) (ns, id string) {
	ns, id, _ = strings.Cut(k, "/")
	return ns, id
}

// volumeRow is a volume as stored.
type volumeRow struct {
	Volume  events.CSIVolume  `msgpack:"v"`
	Secrets map[string]string `msgpack:"s,omitempty"`
	// Claims are sorted by allocation id.
	Claims []events.CSIVolumeClaim `msgpack:"c,omitempty"`
}

// Volume is a stored volume with its claims, as readers see it.
type Volume struct {
	events.CSIVolume
	// Secrets are the volume's secrets in clear: for the plugin calls
	// only; the API shows them redacted.
	Secrets map[string]string
	// Claims are every claim, live and past, by allocation id.
	Claims      []events.CSIVolumeClaim
	CreateIndex uint64
	ModifyIndex uint64
}

// ClaimRank orders claim states along the release: taken (or unset) 0,
// then unpublishing, node-detached, controller-detached, freed.
func ClaimRank(state string) int {
	switch state {
	case events.CSIClaimUnpublishing:
		return 1
	case events.CSIClaimNodeDetached:
		return 2
	case events.CSIClaimControllerDetached:
		return 3
	case events.CSIClaimFreed:
		return 4
	}
	return 0
}

// Live reports whether claim c is held by a running allocation.
func Live(c *events.CSIVolumeClaim) bool { return c.State == events.CSIClaimTaken || c.State == "" }

// Claim returns the volume's claim of allocation id.
func (v *Volume) Claim(alloc string) (*events.CSIVolumeClaim, bool) {
	for i := range v.Claims {
		if v.Claims[i].AllocID == alloc {
			return &v.Claims[i], true
		}
	}
	return nil, false
}

// Count returns how many claims of mode (read or write) the volume holds,
// past ones included (they are released before they stop counting).
func (v *Volume) Count(mode string) int {
	n := 0
	for i := range v.Claims {
		if v.Claims[i].Mode == mode {
			n++
		}
	}
	return n
}

// Past returns the claims whose allocation stopped or is gone.
func (v *Volume) Past() []events.CSIVolumeClaim {
	var out []events.CSIVolumeClaim
	for _, c := range v.Claims {
		if !Live(&c) {
			out = append(out, c)
		}
	}
	return out
}

// MaxWriters is how many write claims the volume's capabilities allow at
// once: 0 for reader-only modes, 1 for single writers, unbounded (-1)
// for multi-node-multi-writer. With several capabilities the most
// permissive counts.
func (v *Volume) MaxWriters() int {
	best := 0
	for _, c := range v.RequestedCapabilities {
		switch c.AccessMode {
		case events.CSIAccessMultiNodeMultiW:
			return -1
		case events.CSIAccessSingleNodeWriter, events.CSIAccessMultiNodeSingleW:
			best = 1
		}
	}
	return best
}

// Supports reports whether the volume may be claimed in the access and
// attachment mode given; an empty mode matches any.
func (v *Volume) Supports(access, attachment string) bool {
	for _, c := range v.RequestedCapabilities {
		if (access == "" || c.AccessMode == access) && (attachment == "" || c.AttachmentMode == attachment) {
			return true
		}
	}
	return false
}

// jobRow is what apply keeps of a job with CSI volumes or plugin tasks.
type jobRow struct {
	Type string `msgpack:"t"`
	Stop bool   `msgpack:"stop,omitempty"`
	// Versions are the group volume requests of the job's recent versions,
	// oldest first.
	Versions []jobVersion `msgpack:"v,omitempty"`
	// Plugins are the plugin ids the latest version runs, sorted.
	Plugins []string `msgpack:"p,omitempty"`
}

// maxJobVersions bounds the versions a jobRow keeps requests of: an
// allocation is placed for a version registered shortly before.
const maxJobVersions = 6

type jobVersion struct {
	Version uint64         `msgpack:"ver"`
	Groups  []groupVolumes `msgpack:"g"`
}

type groupVolumes struct {
	Group string `msgpack:"g"`
	// Requests are the group's CSI volume requests, by name.
	Requests []events.VolumeRequest `msgpack:"r"`
}

// allocRow is what apply keeps of an allocation that claims volumes.
type allocRow struct {
	// Volumes are the Key(ns, id) of the volumes it claims, sorted.
	Volumes  []string `msgpack:"v"`
	Terminal bool     `msgpack:"t,omitempty"`
}

// nodeRow is what apply keeps of a node that runs plugins.
type nodeRow struct {
	Controllers []string `msgpack:"c,omitempty"`
	Nodes       []string `msgpack:"n,omitempty"`
	Down        bool     `msgpack:"d,omitempty"`
}

// instance is one plugin instance on a node.
type instance struct {
	NodeID string         `msgpack:"n"`
	Info   events.CSIInfo `msgpack:"i"`
	// Down marks an instance whose node is down: not healthy.
	Down bool `msgpack:"d,omitempty"`
}

// pluginJob is one job's expectation of a plugin.
type pluginJob struct {
	Key         string `msgpack:"k"`
	Controllers int    `msgpack:"c,omitempty"`
	Nodes       int    `msgpack:"n,omitempty"`
	// System jobs expect one node instance per node they run on: the
	// instances reported.
	System bool `msgpack:"s,omitempty"`
}

// pluginRow is a plugin as stored.
type pluginRow struct {
	Controllers []instance  `msgpack:"c,omitempty"`
	Nodes       []instance  `msgpack:"n,omitempty"`
	Jobs        []pluginJob `msgpack:"j,omitempty"`
}

func (r *pluginRow) empty() bool {
	return len(r.Controllers) == 0 && len(r.Nodes) == 0 && len(r.Jobs) == 0
}

// Plugin is a plugin as readers see it: Nomad's api.CSIPlugin without its
// allocations (the API adds them).
type Plugin struct {
	ID                  string
	Provider            string
	Version             string
	ControllerRequired  bool
	Controllers         map[string]*events.CSIInfo
	Nodes               map[string]*events.CSIInfo
	ControllersHealthy  int
	ControllersExpected int
	NodesHealthy        int
	NodesExpected       int
	// AllocIDs are the allocations running its instances, sorted.
	AllocIDs    []string `json:"-"`
	CreateIndex uint64
	ModifyIndex uint64
}

// ControllersWith returns the ids of the nodes running a healthy
// controller of the plugin with capability, sorted.
func (p *Plugin) ControllersWith(capability string) []string {
	var ids []string
	for id, in := range p.Controllers {
		if in.Healthy && in.ControllerInfo.Has(capability) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// NodeHealthy reports whether the plugin has a healthy node instance on
// node id, and returns it.
func (p *Plugin) NodeHealthy(id string) (*events.CSIInfo, bool) {
	in, ok := p.Nodes[id]
	return in, ok && in.Healthy
}

func get[T any](v projections.View, table, key string) (*T, projections.Row, error) {
	pr, err := v.Get(table, key)
	if err != nil {
		return nil, pr, err
	}
	var r T
	if err := msgpack.Unmarshal(pr.Value, &r); err != nil {
		return nil, pr, fmt.Errorf("decode %s/%s: %w", table, key, err)
	}
	return &r, pr, nil
}

func put(tx *projections.Tx, table, key string, r any) error {
	b, err := events.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode %s/%s: %w", table, key, err)
	}
	return tx.Put(table, key, b)
}

func decodeInto(b []byte, r any) error { return msgpack.Unmarshal(b, r) }

func sortStrings(s []string) { slices.Sort(s) }
