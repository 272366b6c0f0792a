package disconnect

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// history is what walking the archive found (the logic of test/n1's walk,
// trimmed to what these tests check).
type history struct {
	// status is every node's status at the end; changes its statuses in
	// order, as "index:status".
	status  map[string]string
	changes map[string][]string
	// missed counts each node's missed heartbeats.
	missed map[string]int
	// readyFromDown lists nodes that went from down straight to ready
	// (N1's initializing step applies to disconnected nodes only).
	readyFromDown map[string]int
	violations    []string
}

// walk replays the archive of r, tracking every node's status as the nodes
// projection does, and records as violations a placement on a node that
// is not ready at that index, and a disconnected node becoming ready
// without having updated its allocations after its last missed heartbeat.
func walk(t *testing.T, r kv.Reader) *history {
	t.Helper()
	h := &history{status: map[string]string{}, changes: map[string][]string{}, missed: map[string]int{},
		readyFromDown: map[string]int{}}
	missedAt, allocUpdate := map[string]uint64{}, map[string]uint64{}
	set := func(node, status string, index uint64) {
		if h.status[node] != status {
			h.status[node] = status
			h.changes[node] = append(h.changes[node], fmt.Sprintf("%d:%s", index, status))
		}
	}
	err := archive.Scan(r, 1, 0, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		switch ev.Type {
		case "NodeRegistered", "NodeStatusUpdated", "NodeAllocsUpdated", "AllocsPlaced":
		default:
			return nil
		}
		p, err := events.Decode(ev)
		if err != nil {
			return err
		}
		switch p := p.(type) {
		case *events.NodeRegistered:
			if _, ok := h.status[p.Node.ID]; !ok {
				s := p.Node.Status
				if s == "" {
					s = events.NodeStatusInitializing
				}
				set(p.Node.ID, s, index)
			} // an existing node keeps its status (N1)
		case *events.NodeStatusUpdated:
			prev := h.status[p.ID]
			if p.MissedHeartbeat {
				missedAt[p.ID] = index
				h.missed[p.ID]++
			}
			if p.Status == events.NodeStatusReady && missedAt[p.ID] > 0 {
				switch {
				case prev == events.NodeStatusDown:
					h.readyFromDown[p.ID]++
				case allocUpdate[p.ID] <= missedAt[p.ID]:
					h.violations = append(h.violations, fmt.Sprintf("index %d: %s %s -> ready with its last alloc update at %d, not after the missed heartbeat at %d",
						index, p.ID, prev, allocUpdate[p.ID], missedAt[p.ID]))
				}
				missedAt[p.ID] = 0
			}
			set(p.ID, p.Status, index)
		case *events.NodeAllocsUpdated:
			allocUpdate[p.ID] = index
		case *events.AllocsPlaced:
			for _, al := range p.Allocs {
				if s := h.status[al.NodeID]; s != events.NodeStatusReady {
					h.violations = append(h.violations, fmt.Sprintf("index %d: eval %s placed %s (%s) on %s while it was %s",
						index, p.EvalID, al.Name, al.ID, al.NodeID, s))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk agrees with the projection.
	for id, s := range h.status {
		n, err := nodes.Get(projections.NewView(r), id)
		if err != nil || n.Status != s {
			t.Errorf("walk says %s is %s, the projection %v (%v)", id, s, n, err)
		}
	}
	return h
}
