package events

import "slices"

// Entity kinds of CSI: a volume's key value is "<namespace>/<volume id>"
// (volume ids are namespaced, like jobs'); a plugin's is its plugin id.
const (
	KindVolume = "volume"
	KindPlugin = "plugin"
)

// VolumeKey returns the entity key value of volume id in namespace ns.
func VolumeKey(ns, id string) string { return ns + "/" + id }

// CSI access and attachment modes (Nomad's names for the CSI spec's),
// plugin types, claim modes and states, and volume types.
const (
	CSIAccessSingleNodeReader  = "single-node-reader-only"
	CSIAccessSingleNodeWriter  = "single-node-writer"
	CSIAccessMultiNodeReader   = "multi-node-reader-only"
	CSIAccessMultiNodeSingleW  = "multi-node-single-writer"
	CSIAccessMultiNodeMultiW   = "multi-node-multi-writer"
	CSIAttachmentFilesystem    = "file-system"
	CSIAttachmentBlockDevice   = "block-device"
	CSIPluginTypeController    = "controller"
	CSIPluginTypeNode          = "node"
	CSIPluginTypeMonolith      = "monolith"
	CSIClaimRead               = "read"
	CSIClaimWrite              = "write"
	CSIClaimTaken              = "taken"
	CSIClaimUnpublishing       = "unpublishing"
	CSIClaimNodeDetached       = "node-detached"
	CSIClaimControllerDetached = "controller-detached"
	CSIClaimFreed              = "freed"
	VolumeTypeCSI              = "csi"
	VolumeTypeHost             = "host"
)

// ValidCSIAccessMode reports whether m is a CSI access mode.
func ValidCSIAccessMode(m string) bool {
	switch m {
	case CSIAccessSingleNodeReader, CSIAccessSingleNodeWriter, CSIAccessMultiNodeReader,
		CSIAccessMultiNodeSingleW, CSIAccessMultiNodeMultiW:
		return true
	}
	return false
}

// ValidCSIAttachmentMode reports whether m is a CSI attachment mode.
func ValidCSIAttachmentMode(m string) bool {
	return m == CSIAttachmentFilesystem || m == CSIAttachmentBlockDevice
}

// CSITopology is a set of topology segments (zone, rack, …) a volume is
// accessible from or a node plugin serves.
type CSITopology struct {
	Segments map[string]string `msgpack:"seg,omitempty" json:"Segments"`
}

// Matches reports whether node topology n carries every segment of t.
func (t CSITopology) Matches(n *CSITopology) bool {
	if n == nil {
		return len(t.Segments) == 0
	}
	for k, v := range t.Segments {
		if n.Segments[k] != v {
			return false
		}
	}
	return true
}

// CSITopologyRequest is the topology a volume asks for at creation.
type CSITopologyRequest struct {
	Required  []CSITopology `msgpack:"req,omitempty" json:"Required"`
	Preferred []CSITopology `msgpack:"pref,omitempty" json:"Preferred"`
}

// CSIVolumeCapability is one (access mode, attachment mode) pair a volume
// supports.
type CSIVolumeCapability struct {
	AccessMode     string `msgpack:"am" json:"AccessMode"`
	AttachmentMode string `msgpack:"atm" json:"AttachmentMode"`
}

// CSIMountOptions are how a file-system volume is mounted.
type CSIMountOptions struct {
	FSType     string   `msgpack:"fs,omitempty" json:"FSType"`
	MountFlags []string `msgpack:"mf,omitempty" json:"MountFlags"`
}

// CSIVolume is the user-settable part of a CSI volume: what a register
// (or a create, through the plugin) decides. Server-controlled fields —
// claims, health, create and modify indexes — are the projection's and
// never travel in a register.
type CSIVolume struct {
	ID         string `msgpack:"id" json:"ID"`
	Name       string `msgpack:"n,omitempty" json:"Name"`
	Namespace  string `msgpack:"ns" json:"Namespace"`
	PluginID   string `msgpack:"pl" json:"PluginID"`
	ExternalID string `msgpack:"ext,omitempty" json:"ExternalID"`
	// RequestedCapabilities are the modes the volume may be claimed in.
	RequestedCapabilities []CSIVolumeCapability `msgpack:"caps,omitempty" json:"RequestedCapabilities"`
	MountOptions          *CSIMountOptions      `msgpack:"mo,omitempty" json:"MountOptions"`
	Parameters            map[string]string     `msgpack:"par,omitempty" json:"Parameters"`
	Context               map[string]string     `msgpack:"ctx,omitempty" json:"Context"`
	RequestedCapacityMin  int64                 `msgpack:"cmin,omitempty" json:"RequestedCapacityMin"`
	RequestedCapacityMax  int64                 `msgpack:"cmax,omitempty" json:"RequestedCapacityMax"`
	Capacity              int64                 `msgpack:"cap,omitempty" json:"Capacity"`
	RequestedTopologies   *CSITopologyRequest   `msgpack:"rtop,omitempty" json:"RequestedTopologies"`
	// Topologies are where the volume is accessible from; empty means
	// everywhere.
	Topologies []CSITopology `msgpack:"top,omitempty" json:"Topologies"`
}

// CSIVolumeClaim is one allocation's claim on a volume. Mode is read or
// write; AccessMode and AttachmentMode are the claim's own (kept with it,
// so releasing it uses the modes it was published with even when the
// volume's change, N22); State is taken while the allocation lives, then
// unpublishing → node-detached → controller-detached → freed.
type CSIVolumeClaim struct {
	AllocID        string `msgpack:"a" json:"AllocationID"`
	NodeID         string `msgpack:"node" json:"NodeID"`
	Namespace      string `msgpack:"ns,omitempty" json:"Namespace"`
	JobID          string `msgpack:"job,omitempty" json:"JobID"`
	Mode           string `msgpack:"m" json:"Mode"`
	AccessMode     string `msgpack:"am,omitempty" json:"AccessMode"`
	AttachmentMode string `msgpack:"atm,omitempty" json:"AttachmentMode"`
	State          string `msgpack:"st" json:"State"`
}

// CSIVolumeRegistered records a volume registered, created through its
// plugin, or re-registered: Volume holds its user-settable fields, already
// merged with the existing volume's by the command (N18); the projection
// keeps the server-controlled ones. Secrets travel beside the volume so
// the mirror and the event stream can drop them.
type CSIVolumeRegistered struct {
	Volume  CSIVolume         `msgpack:"vol" json:"Volume"`
	Secrets map[string]string `msgpack:"sec,omitempty" json:"Secrets"`
}

// EntityKeys implements Payload.
func (p *CSIVolumeRegistered) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Volume.Namespace},
		{Kind: KindVolume, Value: VolumeKey(p.Volume.Namespace, p.Volume.ID)},
		{Kind: KindPlugin, Value: p.Volume.PluginID}}
}

// CSIVolumeDeregistered records a volume removed (Force: even while
// claimed; its claims go with it).
type CSIVolumeDeregistered struct {
	Namespace string `msgpack:"ns" json:"Namespace"`
	ID        string `msgpack:"id" json:"ID"`
	Force     bool   `msgpack:"f,omitempty" json:"Force"`
}

// EntityKeys implements Payload.
func (p *CSIVolumeDeregistered) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Namespace}, {Kind: KindVolume, Value: VolumeKey(p.Namespace, p.ID)}}
}

// CSIVolumeClaimsUpdated records claims of one volume moving through the
// release steps (the volume watcher, a detach): each claim replaces the
// stored claim of its allocation; State freed removes it.
type CSIVolumeClaimsUpdated struct {
	Namespace string           `msgpack:"ns" json:"Namespace"`
	VolumeID  string           `msgpack:"vol" json:"VolumeID"`
	Claims    []CSIVolumeClaim `msgpack:"cl" json:"Claims"`
}

// EntityKeys implements Payload.
func (p *CSIVolumeClaimsUpdated) EntityKeys() []Key {
	keys := []Key{{Kind: KindNamespace, Value: p.Namespace}, {Kind: KindVolume, Value: VolumeKey(p.Namespace, p.VolumeID)}}
	for _, c := range p.Claims {
		keys = append(keys, Key{Kind: KindAlloc, Value: c.AllocID})
	}
	return keys
}

// VolumeRequest is a group's `volume "name" { … }` block.
type VolumeRequest struct {
	Name           string           `msgpack:"n" json:"Name"`
	Type           string           `msgpack:"t" json:"Type"`
	Source         string           `msgpack:"src" json:"Source"`
	ReadOnly       bool             `msgpack:"ro,omitempty" json:"ReadOnly"`
	AccessMode     string           `msgpack:"am,omitempty" json:"AccessMode"`
	AttachmentMode string           `msgpack:"atm,omitempty" json:"AttachmentMode"`
	MountOptions   *CSIMountOptions `msgpack:"mo,omitempty" json:"MountOptions"`
	// PerAlloc claims "<source>[<alloc index>]", one volume per allocation.
	PerAlloc bool `msgpack:"pa,omitempty" json:"PerAlloc"`
}

// VolumeMount is a task's `volume_mount { volume destination read_only }`.
type VolumeMount struct {
	Volume      string `msgpack:"v" json:"Volume"`
	Destination string `msgpack:"d" json:"Destination"`
	ReadOnly    bool   `msgpack:"ro,omitempty" json:"ReadOnly"`
}

// TaskCSIPluginConfig is a task's `csi_plugin { id type mount_dir }`: the
// task serves a CSI plugin on a unix socket in MountDir (inside its task
// directory), which the client fingerprints into the node.
type TaskCSIPluginConfig struct {
	ID       string `msgpack:"id" json:"ID"`
	Type     string `msgpack:"t" json:"Type"`
	MountDir string `msgpack:"md,omitempty" json:"MountDir"`
}

// CSIInfo is what a node reports about one CSI plugin instance it runs.
type CSIInfo struct {
	PluginID                 string             `msgpack:"id" json:"PluginID"`
	AllocID                  string             `msgpack:"a,omitempty" json:"AllocID"`
	Healthy                  bool               `msgpack:"ok,omitempty" json:"Healthy"`
	HealthDescription        string             `msgpack:"hd,omitempty" json:"HealthDescription"`
	Provider                 string             `msgpack:"p,omitempty" json:"Provider"`
	ProviderVersion          string             `msgpack:"pv,omitempty" json:"ProviderVersion"`
	RequiresControllerPlugin bool               `msgpack:"rc,omitempty" json:"RequiresControllerPlugin"`
	RequiresTopologies       bool               `msgpack:"rt,omitempty" json:"RequiresTopologies"`
	ControllerInfo           *CSIControllerInfo `msgpack:"ci,omitempty" json:"ControllerInfo"`
	NodeInfo                 *CSINodeInfo       `msgpack:"ni,omitempty" json:"NodeInfo"`
	// SocketPath is the plugin's unix socket on the node (for its client).
	SocketPath string `msgpack:"sock,omitempty" json:"SocketPath,omitempty"`
}

// CSIControllerInfo is a controller plugin's capabilities (CSI names such
// as CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME).
type CSIControllerInfo struct {
	Capabilities []string `msgpack:"caps,omitempty" json:"Capabilities"`
}

// Has reports whether the controller has capability c.
func (c *CSIControllerInfo) Has(capability string) bool {
	return c != nil && slices.Contains(c.Capabilities, capability)
}

// CSINodeInfo is a node plugin's identity on the node, its limits, its
// topology and capabilities (STAGE_UNSTAGE_VOLUME, …).
type CSINodeInfo struct {
	ID                 string       `msgpack:"id,omitempty" json:"ID"`
	MaxVolumes         int64        `msgpack:"max,omitempty" json:"MaxVolumes"`
	AccessibleTopology *CSITopology `msgpack:"top,omitempty" json:"AccessibleTopology"`
	Capabilities       []string     `msgpack:"caps,omitempty" json:"Capabilities"`
}

// pluginKeys returns a plugin key for each plugin id of the maps, sorted
// and without duplicates.
func pluginKeys(maps ...map[string]*CSIInfo) []Key {
	var ids []string
	for _, m := range maps {
		for id := range m {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	keys := make([]Key, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, Key{Kind: KindPlugin, Value: id})
	}
	return keys
}

func init() {
	Register(Type{Name: "CSIVolumeRegistered", Version: 1, Topic: "CSIVolume",
		New:       func() Payload { return new(CSIVolumeRegistered) },
		Sensitive: []string{"Secrets"}})
	Register(Type{Name: "CSIVolumeDeregistered", Version: 1, Topic: "CSIVolume",
		New: func() Payload { return new(CSIVolumeDeregistered) }})
	Register(Type{Name: "CSIVolumeClaimsUpdated", Version: 1, Topic: "CSIVolume",
		New: func() Payload { return new(CSIVolumeClaimsUpdated) }})
}
