package nodes

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Table holds one row per node, keyed by id.
const Table = "nodes"

// AllocUpdatesTable holds one empty row per node whose modify index is the
// index of the entry that last recorded the node reporting its allocations
// (N1). It is kept out of the node's row: clients report often, and a node
// row that moved with every report would void the scheduler's node-list
// cache and fail every in-flight plan's node precondition.
const AllocUpdatesTable = "node_alloc_updates"

// Node is a node as readers see it.
type Node struct {
	ID         string                       `msgpack:"id"`
	Name       string                       `msgpack:"name"`
	Datacenter string                       `msgpack:"dc"`
	NodeClass  string                       `msgpack:"class,omitempty"`
	NodePool   string                       `msgpack:"pool,omitempty"`
	HTTPAddr   string                       `msgpack:"http,omitempty"`
	Attributes map[string]string            `msgpack:"attrs,omitempty"`
	Meta       map[string]string            `msgpack:"meta,omitempty"`
	Resources  events.NodeResources         `msgpack:"res"`
	Reserved   events.NodeResources         `msgpack:"rsv"`
	Drivers    map[string]events.DriverInfo `msgpack:"drivers,omitempty"`
	// Networks, MinDynamicPort, MaxDynamicPort, ReservedPorts and
	// HostVolumes are the node's addresses, dynamic port range (0: Nomad's
	// defaults), reserved host ports and host volumes, as registered
	// (events.Node).
	Networks       []events.NodeNetwork                `msgpack:"nets,omitempty"`
	MinDynamicPort int                                 `msgpack:"minp,omitempty"`
	MaxDynamicPort int                                 `msgpack:"maxp,omitempty"`
	ReservedPorts  string                              `msgpack:"rports,omitempty"`
	HostVolumes    map[string]*events.ClientHostVolume `msgpack:"hvols,omitempty"`

	Status            string `msgpack:"status"`
	StatusDescription string `msgpack:"sdesc,omitempty"`
	// StatusUpdatedAt is the leader time of the last status change, in Unix
	// seconds (as Nomad reports it).
	StatusUpdatedAt int64 `msgpack:"sat"`
	// SchedulingEligibility is events.NodeEligible or events.NodeIneligible.
	SchedulingEligibility string `msgpack:"elig"`
	// Drain is true while DrainStrategy is set.
	Drain         bool           `msgpack:"drain,omitempty"`
	DrainStrategy *DrainStrategy `msgpack:"ds,omitempty"`

	// LastMissedHeartbeatIndex is the index of the entry that last marked
	// the node down or disconnected; 0 once it is ready again (N1).
	LastMissedHeartbeatIndex uint64 `msgpack:"lmhi,omitempty"`
	// LastAllocUpdateIndex is the index of the entry that last recorded the
	// node reporting updates to its allocations (N1). Stored in
	// AllocUpdatesTable, filled in by Get and Resolve (not by List).
	LastAllocUpdateIndex uint64 `msgpack:"-"`

	CreateIndex uint64 `msgpack:"-"`
	ModifyIndex uint64 `msgpack:"-"`
}

// ComputedClass returns the node's computed class (events.ComputedClass).
func (n *Node) ComputedClass() string {
	return events.ComputedClass(n.Datacenter, n.NodeClass, n.NodePool, n.Attributes, n.Meta, n.Drivers, n.HostVolumes)
}

// Ready reports whether the node may receive new work: ready, eligible and
// not draining.
func (n *Node) Ready() bool {
	return n.Status == events.NodeStatusReady && n.SchedulingEligibility == events.NodeEligible && !n.Drain
}

// DrainStrategy is a node's drain as stored; it marshals to JSON as Nomad's
// api.DrainStrategy (Deadline in nanoseconds, times as RFC 3339).
type DrainStrategy events.DrainStrategy

type drainJSON struct {
	Deadline         time.Duration
	IgnoreSystemJobs bool
	ForceDeadline    time.Time
	StartedAt        time.Time
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// MarshalJSON implements json.Marshaler.
func (d DrainStrategy) MarshalJSON() ([]byte, error) {
	return json.Marshal(drainJSON{Deadline: time.Duration(d.Deadline), IgnoreSystemJobs: d.IgnoreSystemJobs,
		ForceDeadline: unixTime(d.ForceDeadline), StartedAt: unixTime(d.StartedAt)})
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *DrainStrategy) UnmarshalJSON(b []byte) error {
	var j drainJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*d = DrainStrategy{Deadline: int64(j.Deadline), IgnoreSystemJobs: j.IgnoreSystemJobs,
		ForceDeadline: unixNano(j.ForceDeadline), StartedAt: unixNano(j.StartedAt)}
	return nil
}

// Stub is a node as lists show it: Nomad's api.NodeListStub.
type Stub struct {
	Address               string
	ID                    string
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Drivers               map[string]events.DriverInfo
	CreateIndex           uint64
	ModifyIndex           uint64
}

// Stub returns the node's list view.
func (n *Node) Stub() *Stub {
	addr := n.HTTPAddr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	return &Stub{Address: addr, ID: n.ID, Datacenter: n.Datacenter, Name: n.Name, NodeClass: n.NodeClass,
		NodePool: n.NodePool, Version: n.Attributes["ordo.version"], Drain: n.Drain,
		SchedulingEligibility: n.SchedulingEligibility, Status: n.Status, StatusDescription: n.StatusDescription,
		Drivers: n.Drivers, CreateIndex: n.CreateIndex, ModifyIndex: n.ModifyIndex}
}

// Projection maintains the nodes table.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "nodes" }

// Version implements projections.Projection.
func (Projection) Version() int { return 2 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table, AllocUpdatesTable} }

// Apply implements projections.Projection. Events about a node that does
// not exist (deregistered since the decision) change nothing.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	switch ev.Type {
	case "NodeRegistered", "NodeStatusUpdated", "NodeEligibilityUpdated", "NodeDrainUpdated":
	case "NodeAllocsUpdated":
		id := ev.Key(events.KindNode)
		if _, err := tx.Get(Table, id); errors.Is(err, projections.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		return tx.Put(AllocUpdatesTable, id, nil)
	case "NodeDeregistered":
		id := ev.Key(events.KindNode)
		if _, err := tx.Delete(AllocUpdatesTable, id); err != nil {
			return err
		}
		_, err := tx.Delete(Table, id)
		return err
	default:
		return nil
	}
	p, err := events.Decode(ev)
	if err != nil {
		return err
	}
	id := ev.Key(events.KindNode)
	n, err := Get(tx.View, id)
	if errors.Is(err, projections.ErrNotFound) {
		n = nil
	} else if err != nil {
		return err
	}
	if reg, ok := p.(*events.NodeRegistered); ok {
		n = register(tx, n, &reg.Node)
	} else if n == nil {
		return nil
	} else {
		update(tx, n, p)
	}
	b, err := events.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode node %q: %w", id, err)
	}
	return tx.Put(Table, id, b)
}

// register applies a registration to n, or creates the node when n is nil.
func register(tx *projections.Tx, n *Node, r *events.Node) *Node {
	if n == nil {
		status := r.Status
		if status == "" {
			status = events.NodeStatusInitializing
		}
		n = &Node{Status: status, StatusDescription: "registered", StatusUpdatedAt: tx.Time() / int64(time.Second),
			SchedulingEligibility: events.NodeEligible}
	}
	n.ID, n.Name, n.Datacenter, n.NodeClass, n.NodePool = r.ID, r.Name, r.Datacenter, r.NodeClass, r.NodePool
	n.HTTPAddr, n.Attributes, n.Meta, n.Drivers = r.HTTPAddr, r.Attributes, r.Meta, r.Drivers
	n.Resources, n.Reserved = r.Resources, r.Reserved
	n.Networks, n.MinDynamicPort, n.MaxDynamicPort = r.Networks, r.MinDynamicPort, r.MaxDynamicPort
	n.ReservedPorts, n.HostVolumes = r.ReservedPorts, r.HostVolumes
	return n
}

func update(tx *projections.Tx, n *Node, p events.Payload) {
	switch p := p.(type) {
	case *events.NodeStatusUpdated:
		n.Status, n.StatusDescription = p.Status, p.Description
		n.StatusUpdatedAt = tx.Time() / int64(time.Second)
		switch p.Status {
		case events.NodeStatusDown, events.NodeStatusDisconnected:
			n.LastMissedHeartbeatIndex = tx.Index()
		case events.NodeStatusReady:
			n.LastMissedHeartbeatIndex = 0
		}
	case *events.NodeEligibilityUpdated:
		n.SchedulingEligibility = p.Eligibility
	case *events.NodeDrainUpdated:
		if p.DrainStrategy != nil {
			ds := DrainStrategy(*p.DrainStrategy)
			n.DrainStrategy, n.Drain = &ds, true
			n.SchedulingEligibility = events.NodeIneligible
		} else {
			n.DrainStrategy, n.Drain = nil, false
			if p.MarkEligible {
				n.SchedulingEligibility = events.NodeEligible
			}
		}
	}
}

func fromRow(r projections.Row) (*Node, error) {
	var n Node
	if err := msgpack.Unmarshal(r.Value, &n); err != nil {
		return nil, fmt.Errorf("decode node row: %w", err)
	}
	n.CreateIndex, n.ModifyIndex = r.CreateIndex, r.ModifyIndex
	return &n, nil
}
