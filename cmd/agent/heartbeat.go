package agent

import (
	"hash/fnv"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
)

// liveNodes lists the nodes the heartbeat monitor tracks when this server
// gains leadership: those ready or initializing, and those disconnected,
// whose disconnect window the monitor times out to down.
func (a *Agent) liveNodes() ([]string, error) {
	snap := a.store.Snapshot()
	defer snap.Close()
	list, err := nodes.List(projections.NewView(snap), "")
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range list {
		if n.Status == events.NodeStatusReady || n.Status == events.NodeStatusInitializing ||
			n.Status == events.NodeStatusDisconnected {
			ids = append(ids, n.ID)
		}
	}
	return ids, nil
}

// seedOf derives the heartbeat jitter seed from the server id, so a
// server's jitter is reproducible.
func seedOf(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}
