package testagent

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// NodeChange is one change of a node's status in the log.
type NodeChange struct {
	Index  uint64
	Status string
}

// String renders the change as "index:status".
func (c NodeChange) String() string { return fmt.Sprintf("%d:%s", c.Index, c.Status) }

// NodeWalk is what WalkNodes has found so far: every node's status, and
// its changes in log order.
type NodeWalk struct {
	Status  map[string]string
	Changes map[string][]NodeChange
}

// StatusAt returns node's status in the state at index.
func (w *NodeWalk) StatusAt(node string, index uint64) string {
	s := ""
	for _, c := range w.Changes[node] {
		if c.Index > index {
			break
		}
		s = c.Status
	}
	return s
}

// WalkNodes replays the archive of r from its first index, tracking every
// node's status as the nodes projection does: a registration gives a new
// node its status (initializing when it names none) and leaves an existing
// node's alone (N1), a status update sets it. visit, when not nil, sees
// each NodeRegistered, NodeStatusUpdated, NodeAllocsUpdated and
// AllocsPlaced payload with its index before the walk applies it, so w
// holds the statuses as they were before that index. At the end WalkNodes
// checks that the walk agrees with r's nodes projection.
func WalkNodes(t testing.TB, r kv.Reader, visit func(w *NodeWalk, index uint64, p any)) *NodeWalk {
	t.Helper()
	w := &NodeWalk{Status: map[string]string{}, Changes: map[string][]NodeChange{}}
	set := func(node, status string, index uint64) {
		if w.Status[node] != status {
			w.Status[node] = status
			w.Changes[node] = append(w.Changes[node], NodeChange{index, status})
		}
	}
	err := archive.Scan(r, 1, 0, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		p, err := events.DecodeIf(ev, "NodeRegistered", "NodeStatusUpdated", "NodeAllocsUpdated", "AllocsPlaced")
		if p == nil || err != nil {
			return err
		}
		if visit != nil {
			visit(w, index, p)
		}
		switch p := p.(type) {
		case *events.NodeRegistered:
			if _, ok := w.Status[p.Node.ID]; !ok {
				s := p.Node.Status
				if s == "" {
					s = events.NodeStatusInitializing
				}
				set(p.Node.ID, s, index)
			} // an existing node keeps its status (N1)
		case *events.NodeStatusUpdated:
			set(p.ID, p.Status, index)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range w.Status {
		n, err := nodes.Get(projections.NewView(r), id)
		if err != nil || n.Status != s {
			t.Errorf("walk says %s is %s, the projection %v (%v)", id, s, n, err)
		}
	}
	return w
}
