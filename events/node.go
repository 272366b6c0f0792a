package events

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
)

// KindNode is the entity kind of a node (a machine registered with the
// scheduler); its value is the node id.
const KindNode = "node"

// The statuses of a node.
const (
	// NodeStatusInitializing is a node registered but not yet ready, or one
	// reconnecting that has not yet reported its allocations (N1).
	NodeStatusInitializing = "initializing"
	// NodeStatusReady is a node that heartbeats and may receive work.
	NodeStatusReady = "ready"
	// NodeStatusDown is a node that missed its heartbeat; its allocations are lost.
	NodeStatusDown = "down"
	// NodeStatusDisconnected is a node that missed its heartbeat while running
	// allocations that tolerate disconnects; those allocations are unknown.
	NodeStatusDisconnected = "disconnected"
)

// ValidNodeStatus reports whether s is one of the node statuses.
func ValidNodeStatus(s string) bool {
	switch s {
	case NodeStatusInitializing, NodeStatusReady, NodeStatusDown, NodeStatusDisconnected:
		return true
	}
	return false
}

// The scheduling eligibilities of a node.
const (
	NodeEligible   = "eligible"
	NodeIneligible = "ineligible"
)

// NodeResources are a node's capacity, or the part of it reserved for
// things other than allocations.
type NodeResources struct {
	// CPU is in MHz.
	CPU      int `msgpack:"cpu,omitempty" json:"CPU"`
	MemoryMB int `msgpack:"mem,omitempty" json:"MemoryMB"`
	DiskMB   int `msgpack:"disk,omitempty" json:"DiskMB"`
}

// DriverInfo is what a node reports about one task driver.
type DriverInfo struct {
	Detected          bool              `msgpack:"det,omitempty" json:"Detected"`
	Healthy           bool              `msgpack:"ok,omitempty" json:"Healthy"`
	HealthDescription string            `msgpack:"desc,omitempty" json:"HealthDescription"`
	Attributes        map[string]string `msgpack:"attrs,omitempty" json:"Attributes"`
}

// Node is a node's client-reported fields as NodeRegistered carries them.
type Node struct {
	ID         string                `msgpack:"id" json:"ID"`
	Name       string                `msgpack:"name" json:"Name"`
	Datacenter string                `msgpack:"dc" json:"Datacenter"`
	NodeClass  string                `msgpack:"class,omitempty" json:"NodeClass"`
	NodePool   string                `msgpack:"pool,omitempty" json:"NodePool"`
	Attributes map[string]string     `msgpack:"attrs,omitempty" json:"Attributes"`
	Meta       map[string]string     `msgpack:"meta,omitempty" json:"Meta"`
	Resources  NodeResources         `msgpack:"res" json:"Resources"`
	Reserved   NodeResources         `msgpack:"rsv" json:"Reserved"`
	Drivers    map[string]DriverInfo `msgpack:"drivers,omitempty" json:"Drivers"`
	HTTPAddr   string                `msgpack:"http,omitempty" json:"HTTPAddr"`
	// CSIControllerPlugins and CSINodePlugins are the CSI plugin
	// instances the node runs, by plugin id (events/csi.go).
	CSIControllerPlugins map[string]*CSIInfo `msgpack:"csic,omitempty" json:"CSIControllerPlugins,omitempty"`
	CSINodePlugins       map[string]*CSIInfo `msgpack:"csin,omitempty" json:"CSINodePlugins,omitempty"`
	// Networks are the addresses the node offers ports on, the default
	// first (events/network.go).
	Networks []NodeNetwork `msgpack:"nets,omitempty" json:"NodeNetworks,omitempty"`
	// MinDynamicPort and MaxDynamicPort bound the ports the scheduler
	// picks for dynamic ports on the node; 0 means Nomad's defaults.
	MinDynamicPort int `msgpack:"minp,omitempty" json:"MinDynamicPort,omitempty"`
	MaxDynamicPort int `msgpack:"maxp,omitempty" json:"MaxDynamicPort,omitempty"`
	// ReservedPorts are host ports kept from allocations, as Nomad writes
	// them ("22,80,8000-8100").
	ReservedPorts string `msgpack:"rports,omitempty" json:"ReservedHostPorts,omitempty"`
	// HostVolumes are the host directories the node offers, by name.
	HostVolumes map[string]*ClientHostVolume `msgpack:"hvols,omitempty" json:"HostVolumes,omitempty"`
	// Status is the status a new node starts in. Registering an existing
	// node never changes its status (N1): the projection keeps the status
	// it has, and the command records that status here.
	Status string `msgpack:"status" json:"Status"`
}

// ComputedClass returns a node's computed class (Nomad's): a hash of
// everything a job's constraints may test on a node apart from its
// identity — datacenter, node class, node pool ("" counts as "default"),
// attributes, meta, drivers (detected, healthy) and host volumes (name,
// read-only; a node with none hashes as before they existed) — and not its
// resources, ports or addresses, nor the attributes and meta whose key
// starts with "unique.". Nodes of one
// computed class are interchangeable for feasibility, so the scheduler
// records a blocked eval's eligibility per computed class and the eval
// feed unblocks it only for capacity changes on classes it may fit. The
// value ("v1:" and 16 hex digits) is a pure function of its inputs.
func ComputedClass(datacenter, nodeClass, pool string, attributes, meta map[string]string, drivers map[string]DriverInfo,
	hostVolumes map[string]*ClientHostVolume) string {
	h := sha256.New()
	count := func(n int) {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
	}
	field := func(s string) { // length-prefixed, so fields cannot run into each other
		count(len(s))
		h.Write([]byte(s))
	}
	if pool == "" {
		pool = "default"
	}
	field(datacenter)
	field(nodeClass)
	field(pool)
	for _, m := range []map[string]string{attributes, meta} {
		keys := make([]string, 0, len(m))
		for k := range m {
			if !strings.HasPrefix(k, "unique.") {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		count(len(keys))
		for _, k := range keys {
			field(k)
			field(m[k])
		}
	}
	names := make([]string, 0, len(drivers))
	for name := range drivers {
		names = append(names, name)
	}
	slices.Sort(names)
	count(len(names))
	for _, name := range names {
		d := drivers[name]
		field(name)
		state := "-"
		switch {
		case d.Detected && d.Healthy:
			state = "ok"
		case d.Detected:
			state = "unhealthy"
		}
		field(state)
	}
	if len(hostVolumes) > 0 {
		vols := make([]string, 0, len(hostVolumes))
		for name := range hostVolumes {
			vols = append(vols, name)
		}
		slices.Sort(vols)
		count(len(vols))
		for _, name := range vols {
			field(name)
			ro := "rw"
			if v := hostVolumes[name]; v != nil && v.ReadOnly {
				ro = "ro"
			}
			field(ro)
		}
	}
	return "v1:" + hex.EncodeToString(h.Sum(nil)[:8])
}

// NodeRegistered records a node registering or re-registering.
type NodeRegistered struct {
	Node Node `msgpack:"node" json:"Node"`
}

// EntityKeys implements Payload: the node, then every CSI plugin it runs.
func (p *NodeRegistered) EntityKeys() []Key {
	return append([]Key{{Kind: KindNode, Value: p.Node.ID}}, pluginKeys(p.Node.CSIControllerPlugins, p.Node.CSINodePlugins)...)
}

// NodeStatusUpdated records a node's status changing.
type NodeStatusUpdated struct {
	ID     string `msgpack:"id" json:"ID"`
	Status string `msgpack:"status" json:"Status"`
	// Description says why, for people.
	Description string `msgpack:"desc,omitempty" json:"Description"`
	// MissedHeartbeat marks the heartbeat monitor's down or disconnected:
	// the projection records the entry's index as the node's last missed
	// heartbeat index (N1).
	MissedHeartbeat bool `msgpack:"missed,omitempty" json:"MissedHeartbeat"`
	// UpdatedAt is the leader time of the decision, in Unix nanoseconds.
	UpdatedAt int64 `msgpack:"at" json:"UpdatedAt"`
}

// EntityKeys implements Payload.
func (p *NodeStatusUpdated) EntityKeys() []Key { return []Key{{Kind: KindNode, Value: p.ID}} }

// NodeEligibilityUpdated records a node made eligible or ineligible for
// scheduling.
type NodeEligibilityUpdated struct {
	ID          string `msgpack:"id" json:"ID"`
	Eligibility string `msgpack:"elig" json:"Eligibility"`
}

// EntityKeys implements Payload.
func (p *NodeEligibilityUpdated) EntityKeys() []Key { return []Key{{Kind: KindNode, Value: p.ID}} }

// DrainStrategy is how a node drains. Times are leader times in Unix
// nanoseconds.
type DrainStrategy struct {
	// Deadline is how long allocations may take to migrate; 0 means no
	// deadline and a negative value means force at once.
	Deadline         int64 `msgpack:"dl" json:"Deadline"`
	IgnoreSystemJobs bool  `msgpack:"isj,omitempty" json:"IgnoreSystemJobs"`
	// ForceDeadline is when remaining allocations are stopped; 0 for none.
	ForceDeadline int64 `msgpack:"fd,omitempty" json:"ForceDeadline"`
	// StartedAt is when the drain started.
	StartedAt int64 `msgpack:"sa" json:"StartedAt"`
}

// NodeDrainUpdated records a drain started, changed or stopped. A node with
// a drain strategy is ineligible; a drain stopped with MarkEligible makes
// it eligible again.
type NodeDrainUpdated struct {
	ID            string         `msgpack:"id" json:"ID"`
	DrainStrategy *DrainStrategy `msgpack:"ds" json:"DrainStrategy"`
	MarkEligible  bool           `msgpack:"elig,omitempty" json:"MarkEligible"`
}

// EntityKeys implements Payload.
func (p *NodeDrainUpdated) EntityKeys() []Key { return []Key{{Kind: KindNode, Value: p.ID}} }

// NodeAllocsUpdated records a node reporting updates to its allocations.
// The projection stores the entry's index as the node's last alloc update
// index, which N1 compares with its last missed heartbeat index; the
// allocations' own changes travel in their events in the same entry.
type NodeAllocsUpdated struct {
	ID string `msgpack:"id" json:"ID"`
}

// EntityKeys implements Payload.
func (p *NodeAllocsUpdated) EntityKeys() []Key { return []Key{{Kind: KindNode, Value: p.ID}} }

// NodeDeregistered records a node removed (purged).
type NodeDeregistered struct {
	ID string `msgpack:"id" json:"ID"`
}

// EntityKeys implements Payload.
func (p *NodeDeregistered) EntityKeys() []Key { return []Key{{Kind: KindNode, Value: p.ID}} }

func init() {
	for _, t := range []Type{
		{Name: "NodeRegistered", New: func() Payload { return new(NodeRegistered) }},
		{Name: "NodeStatusUpdated", New: func() Payload { return new(NodeStatusUpdated) }},
		{Name: "NodeEligibilityUpdated", New: func() Payload { return new(NodeEligibilityUpdated) }},
		{Name: "NodeDrainUpdated", New: func() Payload { return new(NodeDrainUpdated) }},
		{Name: "NodeAllocsUpdated", New: func() Payload { return new(NodeAllocsUpdated) }},
		{Name: "NodeDeregistered", New: func() Payload { return new(NodeDeregistered) }},
	} {
		t.Version, t.Topic = 1, "Node"
		Register(t)
	}
}
