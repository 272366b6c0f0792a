package node

import (
	"errors"
	"reflect"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Register registers a node or updates the fields its client reports.
type Register struct {
	Node events.Node
}

var _ commands.Command = Register{}

// Validate implements commands.Command.
func (r Register) Validate() error {
	n := r.Node
	if err := ValidID("ID", n.ID); err != nil {
		return err
	}
	if err := validName("Name", n.Name); err != nil {
		return err
	}
	if err := ValidID("Datacenter", n.Datacenter); err != nil {
		return err
	}
	if n.NodePool != "" {
		if err := ValidID("NodePool", n.NodePool); err != nil {
			return err
		}
	}
	if n.NodeClass != "" {
		if err := validName("NodeClass", n.NodeClass); err != nil {
			return err
		}
	}
	switch n.Status {
	case "", events.NodeStatusInitializing, events.NodeStatusReady:
	default:
		return commands.Invalid("Status", "a node registers as %q or %q, not %q",
			events.NodeStatusInitializing, events.NodeStatusReady, n.Status)
	}
	if err := validResources("Resources", n.Resources); err != nil {
		return err
	}
	if err := validResources("Reserved", n.Reserved); err != nil {
		return err
	}
	for name := range n.Drivers {
		if name == "" {
			return commands.Invalid("Drivers", "driver names must not be empty")
		}
	}
	for k := range n.Attributes {
		if k == "" {
			return commands.Invalid("Attributes", "keys must not be empty")
		}
	}
	for k := range n.Meta {
		if k == "" {
			return commands.Invalid("Meta", "keys must not be empty")
		}
	}
	return validPorts(n) // ports.go
}

// Decide implements commands.Command. A new node starts in the status it
// asks for (initializing by default); an existing node keeps its status
// (N1), and a registration that changes nothing appends nothing.
func (r Register) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	n := normalized(r.Node)
	old, err := lookup(v, n.ID)
	if err != nil {
		if _, missing := errors.AsType[*commands.NotFoundError](err); !missing {
			return commands.Decision{}, err
		}
		if n.Status == "" {
			n.Status = events.NodeStatusInitializing
		}
		return commands.Decision{
			Events:        []events.Payload{&events.NodeRegistered{Node: n}},
			Preconditions: []events.Precondition{{Table: nodes.Table, Key: n.ID, Op: events.Absent}},
		}, nil
	}
	n.Status = old.Status
	was := reported(old)
	if was.CSIControllerPlugins, was.CSINodePlugins, err = csi.NodePlugins(v, n.ID); err != nil {
		return commands.Decision{}, err
	}
	if reflect.DeepEqual(n, was) {
		return commands.Decision{}, nil
	}
	return commands.Decision{
		Events:        []events.Payload{&events.NodeRegistered{Node: n}},
		Preconditions: []events.Precondition{{Table: nodes.Table, Key: n.ID, Op: events.Exists}},
	}, nil
}

// normalized returns n with the default pool and empty maps as nil, the
// way rows store them, so an unchanged registration compares equal.
func normalized(n events.Node) events.Node {
	if n.NodePool == "" {
		n.NodePool = DefaultPool
	}
	n.CSIControllerPlugins, n.CSINodePlugins = csi.Canonical(n.CSIControllerPlugins), csi.Canonical(n.CSINodePlugins)
	if len(n.Attributes) == 0 {
		n.Attributes = nil
	}
	if len(n.Meta) == 0 {
		n.Meta = nil
	}
	if len(n.Networks) == 0 {
		n.Networks = nil
	}
	if len(n.HostVolumes) == 0 {
		n.HostVolumes = nil
	}
	if len(n.Drivers) == 0 {
		n.Drivers = nil
	} else {
		drivers := make(map[string]events.DriverInfo, len(n.Drivers))
		for name, d := range n.Drivers {
			if len(d.Attributes) == 0 {
				d.Attributes = nil
			}
			drivers[name] = d
		}
		n.Drivers = drivers
	}
	return n
}

// reported returns the client-reported fields of n, with its status.
func reported(n *nodes.Node) events.Node {
	return events.Node{ID: n.ID, Name: n.Name, Datacenter: n.Datacenter, NodeClass: n.NodeClass, NodePool: n.NodePool,
		Attributes: n.Attributes, Meta: n.Meta, Resources: n.Resources, Reserved: n.Reserved, Drivers: n.Drivers,
		HTTPAddr: n.HTTPAddr, Networks: n.Networks, MinDynamicPort: n.MinDynamicPort, MaxDynamicPort: n.MaxDynamicPort,
		ReservedPorts: n.ReservedPorts, HostVolumes: n.HostVolumes, Status: n.Status}
}
