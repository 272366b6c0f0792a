package variables

import (
	"errors"
	"strconv"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pv "github.com/ordoplane/ordo/projections/variables"
)

// Delete removes the variable at Path in Namespace. Deleting a variable
// that does not exist succeeds and appends nothing, as in Nomad, unless
// CAS asks for a modify index it does not have.
type Delete struct {
	Namespace string
	Path      string
	// CAS, when set, is the modify index the variable must have (0: it
	// must not exist, which makes the delete a no-op check).
	CAS *uint64
}

var _ commands.Command = Delete{}

// Validate implements commands.Command.
func (d Delete) Validate() error {
	if err := namespace.ValidName("namespace", d.Namespace); err != nil {
		return err
	}
	return ValidPath("Path", d.Path)
}

// Decide implements commands.Command.
func (d Delete) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	var pre []events.Precondition
	if d.CAS != nil {
		c, err := casPrecondition(v, d.Namespace, d.Path, *d.CAS)
		if err != nil {
			return commands.Decision{}, err
		}
		pre = append(pre, c)
	}
	if _, err := pv.Get(v, d.Namespace, d.Path); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, nil
	} else if err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{
		Events:        []events.Payload{&events.VariableDeleted{Namespace: d.Namespace, Path: d.Path}},
		Preconditions: pre,
	}, nil
}

func utoa(n uint64) string { return strconv.FormatUint(n, 10) }
