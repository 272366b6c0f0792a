package namespace

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/nsguard"
)

const namespacesTable = namespaces.Table

// Delete removes a namespace that holds no job that is not dead, no
// variable and no volume (N9).
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
	// N9: refuse while the namespace holds anything, and decide again at
	// apply, so a job registered or a variable written after this decision
	// cannot be orphaned.
	empty := nsguard.EmptyPrecondition(d.Name)
	if h, err := nsguard.Remaining(v, d.Name); err != nil {
		return commands.Decision{}, err
	} else if !h.Empty() {
		return commands.Decision{}, &commands.ConflictError{Precondition: empty, Reason: h.Error()}
	}
	return commands.Decision{
		Events:        []events.Payload{&events.NamespaceDeleted{Name: d.Name}},
		Preconditions: []events.Precondition{{Table: namespacesTable, Key: d.Name, Op: events.Exists}, empty},
	}, nil
}
