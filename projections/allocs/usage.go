package allocs

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// UsageTable holds, per node, the resources of its live (non-terminal)
// allocations, so a scheduler weighs a node without reading its allocs.
const UsageTable = "alloc_node_usage"

// Usage is what a node's live allocations use: their resources, their
// count and the host ports they hold.
type Usage struct {
	Resources events.Resources `msgpack:"r"`
	Allocs    int              `msgpack:"n"`
	// Ports are the host ports the live allocations hold, ascending; a
	// port two allocations hold (which placement never allows) is listed
	// twice, so each frees only its own. Ports are per node, whatever
	// address they are on.
	Ports []int `msgpack:"p,omitempty"`
}

// HasPort reports whether a live allocation holds port p on the node.
func (u *Usage) HasPort(p int) bool {
	_, ok := slices.BinarySearch(u.Ports, p)
	return ok
}

// HostPorts returns the host ports allocation a holds, ascending (nil for
// none).
func HostPorts(a *events.Allocation) []int {
	pm := a.AllocatedResources.Ports()
	if len(pm) == 0 {
		return nil
	}
	out := make([]int, len(pm))
	for i, p := range pm {
		out[i] = p.Value
	}
	slices.Sort(out)
	return out
}

// adjustUsage moves the usage of old (before) to a (after) in the
// event's tally t: either may be nil; terminal allocations count for
// nothing. A live allocation that stays live on its node moves its
// node's usage only if its resources changed (a client update, the most
// frequent change, rewrites nothing).
func adjustUsage(tx *projections.Tx, t *tally, old, a *events.Allocation) error {
	if err := adjustSigning(tx, t, old, a); err != nil { // signing.go (N5)
		return err
	}
	oldLive, newLive := old != nil && !old.Terminal(), a != nil && !a.Terminal()
	if oldLive && newLive && old.NodeID == a.NodeID {
		d := events.Resources{CPU: a.Resources.CPU - old.Resources.CPU, MemoryMB: a.Resources.MemoryMB - old.Resources.MemoryMB,
			DiskMB: a.Resources.DiskMB - old.Resources.DiskMB}
		oldPorts, newPorts := HostPorts(old), HostPorts(a)
		if d == (events.Resources{}) && slices.Equal(oldPorts, newPorts) {
			return nil
		}
		return t.addUsage(tx, a.NodeID, d, 0, oldPorts, newPorts) // tally.go
	}
	if oldLive {
		r := old.Resources
		if err := t.addUsage(tx, old.NodeID, events.Resources{CPU: -r.CPU, MemoryMB: -r.MemoryMB, DiskMB: -r.DiskMB}, -1,
			HostPorts(old), nil); err != nil {
			return err
		}
	}
	if newLive {
		return t.addUsage(tx, a.NodeID, a.Resources, 1, nil, HostPorts(a))
	}
	return nil
}

// usageCodec encodes UsageTable's rows.
var usageCodec = projections.Codec[Usage]{Name: "node usage"}

// NodeUsage returns what the node's live allocations use.
func NodeUsage(v projections.View, node string) (Usage, error) {
	r, err := v.Get(UsageTable, node)
	if errors.Is(err, projections.ErrNotFound) {
		return Usage{}, nil
	}
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	if err := msgpack.Unmarshal(r.Value, &u); err != nil {
		return Usage{}, fmt.Errorf("decode usage of node %q: %w", node, err)
	}
	return u, nil
}

// AllUsage returns the usage of every node that has live allocations, by
// node id: one scan, cheaper than a lookup per node when a caller (the
// scheduler, the plan applier) asks about many nodes.
func AllUsage(v projections.View) (map[string]Usage, error) {
	out := map[string]Usage{}
	err := v.Scan(UsageTable, "", false, func(node string, r projections.Row) error {
		var u Usage
		if err := msgpack.Unmarshal(r.Value, &u); err != nil {
			return fmt.Errorf("decode usage of node %q: %w", node, err)
		}
		out[node] = u
		return nil
	})
	return out, err
}
