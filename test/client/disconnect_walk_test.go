package client

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/test/testagent"
)

// disconnectHistory is what walking the archive found (the logic of test/e2e's walkN1,
// trimmed to what these tests check).
type disconnectHistory struct {
	// Status is every node's status at the end; Changes its statuses in
	// order.
	*testagent.NodeWalk
	// missed counts each node's missed heartbeats.
	missed map[string]int
	// readyFromDown lists nodes that went from down straight to ready
	// (N1's initializing step applies to disconnected nodes only).
	readyFromDown map[string]int
	violations    []string
}

// walkDisconnect replays the archive of r, tracking every node's status as the nodes
// projection does, and records as violations a placement on a node that
// is not ready at that index, and a disconnected node becoming ready
// without having updated its allocations after its last missed heartbeat.
func walkDisconnect(t *testing.T, r kv.Reader) *disconnectHistory {
	t.Helper()
	h := &disconnectHistory{missed: map[string]int{}, readyFromDown: map[string]int{}}
	missedAt, allocUpdate := map[string]uint64{}, map[string]uint64{}
	h.NodeWalk = testagent.WalkNodes(t, r, func(w *testagent.NodeWalk, index uint64, p any) {
		switch p := p.(type) {
		case *events.NodeStatusUpdated:
			prev := w.Status[p.ID]
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
		case *events.NodeAllocsUpdated:
			allocUpdate[p.ID] = index
		case *events.AllocsPlaced:
			for _, al := range p.Allocs {
				if s := w.Status[al.NodeID]; s != events.NodeStatusReady {
					h.violations = append(h.violations, fmt.Sprintf("index %d: eval %s placed %s (%s) on %s while it was %s",
						index, p.EvalID, al.Name, al.ID, al.NodeID, s))
				}
			}
		}
	})
	return h
}
