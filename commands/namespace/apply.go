package namespace

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Apply creates a namespace or replaces its user-settable fields.
type Apply struct {
	Name        string
	Description string
	Meta        map[string]string
	// VariablesQuota bounds the namespace's encrypted variable bytes; 0 is
	// no limit (N13).
	VariablesQuota int64
	// IfAbsent makes the command a no-op when the namespace exists, and
	// carries an "absent" precondition (used to create default once).
	IfAbsent bool
}

var _ commands.Command = Apply{}

// Validate implements commands.Command.
func (a Apply) Validate() error {
	if err := ValidName("Name", a.Name); err != nil {
		return err
	}
	if len(a.Description) > MaxDescription {
		return commands.Invalid("Description", "%d bytes exceeds %d", len(a.Description), MaxDescription)
	}
	if a.VariablesQuota < 0 {
		return commands.Invalid("VariablesQuota", "%d is negative; 0 means no limit", a.VariablesQuota)
	}
	for k := range a.Meta {
		if k == "" {
			return commands.Invalid("Meta", "keys must not be empty")
		}
	}
	return nil
}

// Decide implements commands.Command.
func (a Apply) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	ev := &events.NamespaceUpserted{Namespace: events.Namespace{Name: a.Name, Description: a.Description, Meta: a.Meta,
		VariablesQuota: a.VariablesQuota}}
	if !a.IfAbsent {
		return commands.Decision{Events: []events.Payload{ev}}, nil
	}
	if _, err := v.Get(namespacesTable, a.Name); err == nil {
		return commands.Decision{}, nil
	}
	return commands.Decision{
		Events:        []events.Payload{ev},
		Preconditions: []events.Precondition{{Table: namespacesTable, Key: a.Name, Op: events.Absent}},
	}, nil
}
