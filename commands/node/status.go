package node

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/services"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
)

// UpdateStatus asks for a node's status to change: a client heartbeating
// asks for ready, the heartbeat monitor for down or disconnected.
type UpdateStatus struct {
	ID     string
	Status string
	// Description says why, for people.
	Description string
	// MissedHeartbeat marks the heartbeat monitor's request.
	MissedHeartbeat bool
}

var _ commands.Command = UpdateStatus{}

// Validate implements commands.Command.
func (u UpdateStatus) Validate() error {
	if err := ValidID("ID", u.ID); err != nil {
		return err
	}
	if !events.ValidNodeStatus(u.Status) {
		return commands.Invalid("Status", "%q is not one of initializing, ready, down, disconnected", u.Status)
	}
	if u.MissedHeartbeat && u.Status != events.NodeStatusDown && u.Status != events.NodeStatusDisconnected {
		return commands.Invalid("Status", "a missed heartbeat makes a node down or disconnected, not %q", u.Status)
	}
	return nil
}

// Decide implements commands.Command. The status decided may differ from
// the one asked for (N1: see Effective); nothing is appended when it is
// the node's status already.
func (u UpdateStatus) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	n, err := lookup(v, u.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	status := Effective(n, u.Status)
	// N1: a node that misses its heartbeat while running allocations that
	// tolerate disconnects becomes disconnected (its allocs unknown), not down.
	if u.MissedHeartbeat && status == events.NodeStatusDown {
		tolerant, err := disconnectTolerant(v, u.ID)
		if err != nil {
			return commands.Decision{}, err
		}
		if tolerant {
			status = events.NodeStatusDisconnected
		}
	}
	if status == n.Status {
		return commands.Decision{}, nil
	}
	desc := u.Description
	if status != u.Status {
		desc = "reconnecting: waiting for the node to update its allocations"
	}
	d := commands.Decision{
		Events: []events.Payload{&events.NodeStatusUpdated{ID: u.ID, Status: status, Description: desc,
			MissedHeartbeat: u.MissedHeartbeat, UpdatedAt: now.UnixNano()}},
		// The status was decided on the node and on its last alloc report
		// (N1): either moving refuses it at apply.
		Preconditions: append(unchangedSince(n), events.Precondition{Table: nodes.AllocUpdatesTable, Key: n.ID,
			Op: events.ModifyIndex, Index: n.LastAllocUpdateIndex}),
	}
	// A node down takes its service instances with it, in the same entry.
	if status == events.NodeStatusDown {
		dereg, err := services.ForNode(v, u.ID, services.ReasonNodeDown)
		if err != nil {
			return commands.Decision{}, err
		}
		if dereg != nil {
			d.Events = append(d.Events, dereg)
		}
	}
	// Lost or unknown allocations need replacing, a ready node may take
	// work: the node's jobs are re-evaluated in the same entry.
	switch status {
	case events.NodeStatusDown, events.NodeStatusDisconnected, events.NodeStatusReady:
		return withNodeEvals(d, v, u.ID, events.EvalTriggerNodeUpdate, now, ids)
	}
	return d, nil
}

// Effective returns the status a request for status yields on n (N1): a
// disconnected node asking for ready becomes initializing, and a node that
// missed a heartbeat becomes ready only once it has updated its
// allocations after the index at which it missed it.
func Effective(n *nodes.Node, status string) string {
	if status != events.NodeStatusReady {
		return status
	}
	reconnecting := n.Status == events.NodeStatusDisconnected ||
		(n.Status == events.NodeStatusInitializing && n.LastMissedHeartbeatIndex > 0)
	if reconnecting && n.LastAllocUpdateIndex <= n.LastMissedHeartbeatIndex {
		return events.NodeStatusInitializing
	}
	return events.NodeStatusReady
}
