package node

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/services"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Deregister removes a node (Nomad's node purge).
type Deregister struct {
	ID string
}

var _ commands.Command = Deregister{}

// Validate implements commands.Command.
func (d Deregister) Validate() error { return ValidID("ID", d.ID) }

// Decide implements commands.Command.
func (d Deregister) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := lookup(v, d.ID); err != nil {
		return commands.Decision{}, err
	}
	dec := commands.Decision{
		Events:        []events.Payload{&events.NodeDeregistered{ID: d.ID}},
		Preconditions: []events.Precondition{{Table: nodes.Table, Key: d.ID, Op: events.Exists}},
	}
	// The node's service instances go with it, in the same entry.
	dereg, err := services.ForNode(v, d.ID, services.ReasonNodePurged)
	if err != nil {
		return commands.Decision{}, err
	}
	if dereg != nil {
		dec.Events = append(dec.Events, dereg)
	}
	return dec, nil
}
