package node

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
)

// CompleteDrain ends a node's drain once nothing is left to migrate off it
// (Nomad's drain complete): the drain strategy is cleared and the node
// stays ineligible until an operator makes it eligible. The node drainer
// (processors/drainer) submits it.
type CompleteDrain struct {
	ID string
	// ModifyIndex is the node's modify index when the drainer found the
	// node done; the entry is refused (409) if the node changed since, so
	// a drain changed meanwhile is never completed. 0 takes the index read
	// when deciding.
	ModifyIndex uint64
}

var _ commands.Command = CompleteDrain{}

// Validate implements commands.Command.
func (c CompleteDrain) Validate() error { return ValidID("ID", c.ID) }

// Decide implements commands.Command. A node that is not draining needs
// nothing.
func (c CompleteDrain) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	n, err := lookup(v, c.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if !n.Drain {
		return commands.Decision{}, nil
	}
	idx := c.ModifyIndex
	if idx == 0 {
		idx = n.ModifyIndex
	}
	return commands.Decision{
		Events:        []events.Payload{&events.NodeDrainUpdated{ID: c.ID}},
		Preconditions: []events.Precondition{{Table: nodes.Table, Key: c.ID, Op: events.ModifyIndex, Index: idx}},
	}, nil
}
