package server

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/servers"
)

// Remove records that a server left the raft configuration (an operator's
// remove-peer), so the servers table lists members only.
type Remove struct {
	ID string
}

var _ commands.Command = Remove{}

// Validate implements commands.Command.
func (r Remove) Validate() error {
	if r.ID == "" {
		return commands.Invalid("ID", "required")
	}
	return nil
}

// Decide implements commands.Command: ServerRemoved when the server is
// recorded, nothing otherwise.
func (r Remove) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := servers.Get(v, r.ID); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, nil
	} else if err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{Events: []events.Payload{&events.ServerRemoved{ID: r.ID}}}, nil
}
