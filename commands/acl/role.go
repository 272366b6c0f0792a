package acl

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	acls "github.com/ordoplane/ordo/projections/acl"
)

// UpsertRole creates a role (ID empty: one is minted) or updates one.
type UpsertRole struct {
	ID          string
	Name        string
	Description string
	Policies    []string

	// id is the role's id once decided; read it with Result.
	id *string
}

var _ commands.Command = (*UpsertRole)(nil)

// Validate implements commands.Command.
func (u *UpsertRole) Validate() error {
	if err := ValidName("Name", u.Name); err != nil {
		return err
	}
	if err := validDescription(u.Description); err != nil {
		return err
	}
	if len(u.Policies) == 0 {
		return commands.Invalid("Policies", "a role links at least one policy")
	}
	for _, p := range u.Policies {
		if err := ValidName("Policies", p); err != nil {
			return err
		}
	}
	return nil
}

// Decide implements commands.Command: the policies must exist, and the
// name must not belong to another role.
func (u *UpsertRole) Decide(v projections.View, _ time.Time, ids commands.IDs) (commands.Decision, error) {
	var pre []events.Precondition
	id := u.ID
	if id == "" {
		id = ids()
	} else {
		old, err := acls.GetRole(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			return commands.Decision{}, &commands.NotFoundError{Kind: "ACL role", ID: id}
		} else if err != nil {
			return commands.Decision{}, err
		}
		pre = append(pre, events.Precondition{Table: acls.TableRoles, Key: id, Op: events.ModifyIndex, Index: old.ModifyIndex})
	}
	if other, err := acls.RoleByName(v, u.Name); err == nil && other.ID != id {
		return commands.Decision{}, commands.Invalid("Name", "role %q already exists with id %s", u.Name, other.ID)
	} else if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, err
	} else if err != nil {
		pre = append(pre, events.Precondition{Table: acls.TableRoleNames, Key: u.Name, Op: events.Absent})
	}
	pols := dedupe(u.Policies)
	for _, p := range pols {
		if _, err := v.Get(acls.TablePolicies, p); errors.Is(err, projections.ErrNotFound) {
			return commands.Decision{}, commands.Invalid("Policies", "policy %q does not exist", p)
		} else if err != nil {
			return commands.Decision{}, err
		}
		pre = append(pre, events.Precondition{Table: acls.TablePolicies, Key: p, Op: events.Exists})
	}
	if u.id == nil {
		u.id = new(string)
	}
	*u.id = id
	return commands.Decision{
		Events:        []events.Payload{&events.ACLRoleUpserted{ID: id, Name: u.Name, Description: u.Description, Policies: pols}},
		Preconditions: pre,
	}, nil
}

// Result returns the role's id once the command was decided.
func (u *UpsertRole) Result() string {
	if u.id == nil {
		return ""
	}
	return *u.id
}

// DeleteRole removes a role; tokens linking it drop the link when read (N8).
type DeleteRole struct{ ID string }

var _ commands.Command = DeleteRole{}

// Validate implements commands.Command.
func (d DeleteRole) Validate() error {
	if d.ID == "" {
		return commands.Invalid("id", "required")
	}
	return nil
}

// Decide implements commands.Command.
func (d DeleteRole) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := v.Get(acls.TableRoles, d.ID); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "ACL role", ID: d.ID}
	} else if err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{
		Events:        []events.Payload{&events.ACLRoleDeleted{ID: d.ID}},
		Preconditions: []events.Precondition{{Table: acls.TableRoles, Key: d.ID, Op: events.Exists}},
	}, nil
}
