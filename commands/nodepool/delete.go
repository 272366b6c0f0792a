package nodepool

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodepools"
)

// Delete removes a node pool no node and no job is in.
type Delete struct {
	Name string
}

var _ commands.Command = Delete{}

// Validate implements commands.Command.
func (d Delete) Validate() error {
	if err := ValidName("name", d.Name); err != nil {
		return err
	}
	return notBuiltIn("name", d.Name)
}

// Decide implements commands.Command.
func (d Delete) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := v.Get(nodepools.Table, d.Name); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "node pool", ID: d.Name}
	} else if err != nil {
		return commands.Decision{}, err
	}
	unused := nodepools.UnusedPrecondition(d.Name)
	if err := nodepools.InUse(v, d.Name); err != nil {
		return commands.Decision{}, &commands.ConflictError{Precondition: unused, Reason: err.Error()}
	}
	return commands.Decision{
		Events: []events.Payload{&events.NodePoolDeleted{Name: d.Name}},
		Preconditions: []events.Precondition{{Table: nodepools.Table, Key: d.Name, Op: events.Exists},
			unused},
	}, nil
}
