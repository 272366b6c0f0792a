package acl

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	acls "github.com/ordoplane/ordo/projections/acl"
)

// ApplyPolicy creates or replaces an ACL policy, optionally attached to a
// workload (N7).
type ApplyPolicy struct {
	Name        string
	Description string
	Rules       string
	JobACL      *events.ACLWorkload
}

var _ commands.Command = ApplyPolicy{}

// Validate implements commands.Command.
func (a ApplyPolicy) Validate() error {
	if err := ValidName("Name", a.Name); err != nil {
		return err
	}
	if err := validDescription(a.Description); err != nil {
		return err
	}
	if _, err := policy.Parse(a.Rules); err != nil {
		return commands.Invalid("Rules", "%v", err)
	}
	if w := a.JobACL; w != nil {
		switch {
		case w.Namespace == "":
			return commands.Invalid("JobACL.Namespace", "required when a policy is attached to a workload")
		case w.JobID == "":
			return commands.Invalid("JobACL.JobID", "required when a policy is attached to a workload")
		case w.Task != "" && w.Group == "":
			return commands.Invalid("JobACL.Group", "required when a task is given")
		}
	}
	return nil
}

// Decide implements commands.Command.
func (a ApplyPolicy) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: []events.Payload{&events.ACLPolicyUpserted{
		Name: a.Name, Description: a.Description, Rules: a.Rules, JobACL: a.JobACL}}}, nil
}

// DeletePolicy removes an ACL policy.
type DeletePolicy struct{ Name string }

var _ commands.Command = DeletePolicy{}

// Validate implements commands.Command.
func (d DeletePolicy) Validate() error { return ValidName("name", d.Name) }

// Decide implements commands.Command.
func (d DeletePolicy) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := v.Get(acls.TablePolicies, d.Name); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "ACL policy", ID: d.Name}
	} else if err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{
		Events:        []events.Payload{&events.ACLPolicyDeleted{Name: d.Name}},
		Preconditions: []events.Precondition{{Table: acls.TablePolicies, Key: d.Name, Op: events.Exists}},
	}, nil
}
