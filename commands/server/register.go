package server

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/servers"
)

// Register records a server's addresses.
type Register struct {
	ID       string
	RaftAddr string
	HTTPAddr string
}

var _ commands.Command = Register{}

// Validate implements commands.Command.
func (r Register) Validate() error {
	switch {
	case r.ID == "":
		return commands.Invalid("ID", "required")
	case r.RaftAddr == "":
		return commands.Invalid("RaftAddr", "required")
	case r.HTTPAddr == "":
		return commands.Invalid("HTTPAddr", "required")
	}
	return nil
}

// Decide implements commands.Command.
func (r Register) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if s, err := servers.Get(v, r.ID); err == nil && s.RaftAddr == r.RaftAddr && s.HTTPAddr == r.HTTPAddr {
		return commands.Decision{}, nil
	}
	return commands.Decision{Events: []events.Payload{
		&events.ServerRegistered{ID: r.ID, RaftAddr: r.RaftAddr, HTTPAddr: r.HTTPAddr},
	}}, nil
}
