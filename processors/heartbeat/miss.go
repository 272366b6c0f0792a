package heartbeat

import (
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
)

// The descriptions of the statuses a missed heartbeat sets.
const (
	descMissed = "missed heartbeat"
	descLost   = "missed heartbeat: disconnected longer than its allocations tolerate"
)

// miss is the command the monitor runs when a node misses its TTL: a
// node.UpdateStatus, chosen and decided on the pipeline's view, which also
// tells the monitor what to track next, read from that same view.
//
//   - A node that is not disconnected is asked down with MissedHeartbeat;
//     node.UpdateStatus makes it disconnected instead when it runs
//     allocations that tolerate disconnects (N1). Disconnected, it has
//     the longest lost_after of those allocations' groups to come back.
//   - A disconnected node whose window has passed, or that runs no
//     tolerant allocation any more, is marked down (still a missed
//     heartbeat).
//   - A disconnected node within its window is left as it is, with the
//     rest of its window to come back (after a leader failover).
type miss struct {
	id string

	// Set by Decide for the monitor, once the command applied: whether it
	// changed the node's status, the status after it and, for a
	// disconnected node, how long until its window ends, or forever when
	// it never does (a group with lost_after 0).
	changed bool
	status  string
	left    time.Duration
	forever bool
}

var _ commands.Command = (*miss)(nil)

// Validate implements commands.Command.
func (m *miss) Validate() error {
	return node.UpdateStatus{ID: m.id, Status: events.NodeStatusDown, MissedHeartbeat: true}.Validate()
}

// Decide implements commands.Command.
func (m *miss) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	m.changed, m.status, m.left, m.forever = false, "", 0, false
	n, err := nodes.Get(v, m.id)
	if errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "node", ID: m.id}
	} else if err != nil {
		return commands.Decision{}, err
	}
	w, err := disconnectWindow(v, m.id)
	if err != nil {
		return commands.Decision{}, fmt.Errorf("disconnect window of node %q: %w", m.id, err)
	}
	if n.Status == events.NodeStatusDisconnected {
		end := time.Unix(n.StatusUpdatedAt, 0).Add(w.lostAfter)
		if w.tolerant && (w.forever || now.Before(end)) {
			m.status, m.left, m.forever = n.Status, end.Sub(now), w.forever
			return commands.Decision{}, nil
		}
		// Asked without MissedHeartbeat, or node.UpdateStatus would keep
		// a node with tolerant allocations disconnected; it is one still.
		d, err := node.UpdateStatus{ID: m.id, Status: events.NodeStatusDown, Description: descLost}.Decide(v, now, ids)
		if err != nil {
			return d, err
		}
		for _, p := range d.Events {
			if s, ok := p.(*events.NodeStatusUpdated); ok {
				s.MissedHeartbeat = true
			}
		}
		m.changed, m.status = len(d.Events) > 0, events.NodeStatusDown
		return d, nil
	}
	d, err := node.UpdateStatus{ID: m.id, Status: events.NodeStatusDown, Description: descMissed, MissedHeartbeat: true}.Decide(v, now, ids)
	if err != nil {
		return d, err
	}
	m.changed, m.status = len(d.Events) > 0, n.Status
	for _, p := range d.Events {
		if s, ok := p.(*events.NodeStatusUpdated); ok {
			m.status = s.Status
		}
	}
	if m.status == events.NodeStatusDisconnected {
		m.left, m.forever = w.lostAfter, w.forever
	}
	return d, nil
}

// window is how long a node may stay disconnected.
type window struct {
	// tolerant: the node runs a live allocation whose group tolerates
	// disconnects (a disconnect block, or max_client_disconnect).
	tolerant bool
	// lostAfter is the longest lost_after of those groups.
	lostAfter time.Duration
	// forever: one of those groups' allocations is never lost (lost_after
	// 0), as the scheduler reads it.
	forever bool
}

// disconnectWindow reads the window of node id: its non-terminal
// allocations' groups, in their jobs' current versions, as
// node.UpdateStatus reads them to decide tolerance.
func disconnectWindow(v projections.View, id string) (window, error) {
	var w window
	onNode, err := allocs.ByNode(v, id)
	if err != nil {
		return w, err
	}
	for _, a := range onNode {
		if a.Terminal() {
			continue
		}
		j, err := jobs.Get(v, a.Namespace, a.JobID)
		if errors.Is(err, projections.ErrNotFound) {
			continue // purged: nothing of it tolerates anything
		} else if err != nil {
			return w, err
		}
		for _, tg := range j.TaskGroups {
			if tg.Name != a.TaskGroup {
				continue
			}
			var lostAfter time.Duration
			switch {
			case tg.Disconnect != nil:
				lostAfter = tg.Disconnect.LostAfter
			case tg.MaxClientDisconnect > 0:
				lostAfter = tg.MaxClientDisconnect
			default:
				continue
			}
			w.tolerant = true
			w.lostAfter = max(w.lostAfter, lostAfter)
			w.forever = w.forever || lostAfter <= 0
		}
	}
	return w, nil
}
