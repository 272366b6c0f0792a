package services

import (
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	ps "github.com/ordoplane/ordo/projections/services"
)

// The reasons a ServicesDeregistered records.
const (
	ReasonClient        = "client"
	ReasonUser          = "user"
	ReasonAllocTerminal = "alloc terminal"
	ReasonNodeDown      = "node down"
	ReasonAllocDeleted  = "alloc deleted"
	ReasonNodePurged    = "node purged"
)

// Deregister is a client removing service instances of allocations on
// its node (their tasks stopped).
type Deregister struct {
	NodeID string
	IDs    []string
}

var _ commands.Command = Deregister{}

// Validate implements commands.Command.
func (c Deregister) Validate() error {
	if err := ValidID("NodeID", c.NodeID); err != nil {
		return err
	}
	if len(c.IDs) > MaxRegistrations {
		return commands.Invalid("IDs", "%d ids exceed %d", len(c.IDs), MaxRegistrations)
	}
	for i, id := range c.IDs {
		if err := ValidID(fmt.Sprintf("IDs[%d]", i), id); err != nil {
			return err
		}
	}
	return nil
}

// Decide implements commands.Command: ids that are not registered are
// already gone; one registered by another node is refused.
func (c Deregister) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	var ids []string
	seen := map[string]bool{}
	for i, id := range c.IDs {
		s, err := ps.Get(v, id)
		switch {
		case errors.Is(err, projections.ErrNotFound):
			continue
		case err != nil:
			return commands.Decision{}, err
		case s.NodeID != c.NodeID:
			return commands.Decision{}, commands.Invalid(fmt.Sprintf("IDs[%d]", i), "registration %q belongs to node %q", id, s.NodeID)
		case seen[id]:
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return commands.Decision{}, nil
	}
	return commands.Decision{Events: []events.Payload{&events.ServicesDeregistered{IDs: ids, Reason: ReasonClient}}}, nil
}

// Delete is a user removing one service instance (DELETE
// /v1/service/:name/:id); the client registers it again while its
// allocation runs, as in Nomad.
type Delete struct {
	Namespace, Name, ID string
}

var _ commands.Command = Delete{}

// Validate implements commands.Command.
func (c Delete) Validate() error {
	if err := ValidName("name", c.Name); err != nil {
		return err
	}
	return ValidID("id", c.ID)
}

// Decide implements commands.Command: the instance must exist under that
// name in that namespace.
func (c Delete) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	s, err := ps.Get(v, c.ID)
	if errors.Is(err, projections.ErrNotFound) || err == nil && (s.Namespace != c.Namespace || s.ServiceName != c.Name) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "service registration", ID: c.ID}
	} else if err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{
		Events:        []events.Payload{&events.ServicesDeregistered{IDs: []string{c.ID}, Reason: ReasonUser}},
		Preconditions: []events.Precondition{{Table: ps.Table, Key: c.ID, Op: events.Exists}},
	}, nil
}
