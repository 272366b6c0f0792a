package namespace

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
)

const namespacesTable = namespaces.Table

// Delete removes a namespace.
type Delete struct {
	Name string
}

var _ commands.Command = Delete{}

// Validate implements commands.Command.
func (d Delete) Validate() error {
	if err := ValidName("name", d.Name); err != nil {
		return err
	}
	if d.Name == namespaces.Default {
		return commands.Invalid("name", "the %q namespace cannot be deleted", namespaces.Default)
	}
	return nil
}

// Decide implements commands.Command.
func (d Delete) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := v.Get(namespacesTable, d.Name); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "namespace", ID: d.Name}
	} else if err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{
		Events:        []events.Payload{&events.NamespaceDeleted{Name: d.Name}},
		Preconditions: []events.Precondition{{Table: namespacesTable, Key: d.Name, Op: events.Exists}},
	}, nil
}
