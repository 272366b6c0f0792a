package services

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/nodes"
	ps "github.com/ordoplane/ordo/projections/services"
)

// Register is a client registering or updating the service instances of
// allocations on its node (a check's status changed, say).
type Register struct {
	NodeID   string
	Services []events.ServiceRegistration
}

var _ commands.Command = Register{}

// Validate implements commands.Command.
func (c Register) Validate() error {
	if err := ValidID("NodeID", c.NodeID); err != nil {
		return err
	}
	if len(c.Services) > MaxRegistrations {
		return commands.Invalid("Services", "%d registrations exceed %d", len(c.Services), MaxRegistrations)
	}
	seen := make(map[string]bool, len(c.Services))
	for i := range c.Services {
		field := fmt.Sprintf("Services[%d]", i)
		if err := validate(field, c.NodeID, &c.Services[i]); err != nil {
			return err
		}
		if seen[c.Services[i].ID] {
			return commands.Invalid(field+".ID", "registration %q appears twice", c.Services[i].ID)
		}
		seen[c.Services[i].ID] = true
	}
	return nil
}

// Decide implements commands.Command: the node must exist; each
// registration's allocation must exist on it, be live and match its
// namespace and job; an id registered by another allocation is refused.
// Registrations equal to the stored ones are dropped, and when none is
// left nothing is appended.
func (c Register) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	n, err := nodes.Get(v, c.NodeID)
	if errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "node", ID: c.NodeID}
	} else if err != nil {
		return commands.Decision{}, err
	}
	var out []events.ServiceRegistration
	var allocIDs []string
	for i := range c.Services {
		s := c.Services[i]
		field := fmt.Sprintf("Services[%d]", i)
		s.NodeID = c.NodeID
		if s.Datacenter == "" {
			s.Datacenter = n.Datacenter
		}
		s.Tags, s.Checks = slices.Clip(s.Tags), slices.Clip(s.Checks)
		s.CreateIndex, s.ModifyIndex = 0, 0
		why, err := ps.AllocLive(v, c.NodeID, s.AllocID)
		if err != nil {
			return commands.Decision{}, err
		}
		if why != "" {
			return commands.Decision{}, commands.Invalid(field+".AllocID", "%s", why)
		}
		a, err := allocs.Get(v, s.AllocID)
		if err != nil {
			return commands.Decision{}, err
		}
		if a.Namespace != s.Namespace {
			return commands.Decision{}, commands.Invalid(field+".Namespace", "%q is not allocation %q's namespace %q", s.Namespace, s.AllocID, a.Namespace)
		}
		if a.JobID != s.JobID {
			return commands.Decision{}, commands.Invalid(field+".JobID", "%q is not allocation %q's job %q", s.JobID, s.AllocID, a.JobID)
		}
		old, err := ps.Get(v, s.ID)
		switch {
		case errors.Is(err, projections.ErrNotFound):
		case err != nil:
			return commands.Decision{}, err
		case old.AllocID != s.AllocID:
			return commands.Decision{}, commands.Invalid(field+".ID", "registration %q belongs to allocation %q", s.ID, old.AllocID)
		case ps.Equal(old, &s):
			continue
		}
		out = append(out, s)
		if !slices.Contains(allocIDs, s.AllocID) {
			allocIDs = append(allocIDs, s.AllocID)
		}
	}
	if len(out) == 0 {
		return commands.Decision{}, nil
	}
	pre := []events.Precondition{{Table: nodes.Table, Key: c.NodeID, Op: events.Exists}}
	for _, a := range allocIDs {
		pre = append(pre, ps.AllocLivePrecondition(c.NodeID, a))
	}
	return commands.Decision{Events: []events.Payload{&events.ServicesRegistered{NodeID: c.NodeID, Services: out}},
		Preconditions: pre}, nil
}
