package nodepool

import (
	"regexp"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodepools"
)

// validName is Nomad's rule for pool names: letters, digits, dashes and
// underscores, 1–128 characters.
var validName = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,128}$`)

// MaxDescription is the longest description accepted, in bytes.
const MaxDescription = 256

// ValidName reports whether name may name a node pool, as a
// *commands.ValidationError naming field.
func ValidName(field, name string) error {
	if !validName.MatchString(name) {
		return commands.Invalid(field, "%q must be 1-128 letters, digits, dashes or underscores", name)
	}
	return nil
}

// notBuiltIn refuses a change to a built-in pool.
func notBuiltIn(field, name string) error {
	if nodepools.BuiltIn(name) != nil {
		return commands.Invalid(field, "the built-in node pool %q cannot be changed or deleted", name)
	}
	return nil
}

// Apply creates a node pool or replaces its description and metadata.
type Apply struct {
	Name        string
	Description string
	Meta        map[string]string
}

var _ commands.Command = Apply{}

// Validate implements commands.Command.
func (a Apply) Validate() error {
	if err := ValidName("Name", a.Name); err != nil {
		return err
	}
	if err := notBuiltIn("Name", a.Name); err != nil {
		return err
	}
	if len(a.Description) > MaxDescription {
		return commands.Invalid("Description", "%d bytes exceeds %d", len(a.Description), MaxDescription)
	}
	for k := range a.Meta {
		if k == "" {
			return commands.Invalid("Meta", "keys must not be empty")
		}
	}
	return nil
}

// Decide implements commands.Command.
func (a Apply) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	ev := &events.NodePoolUpserted{Pool: events.NodePool{Name: a.Name, Description: a.Description, Meta: a.Meta}}
	return commands.Decision{Events: []events.Payload{ev}}, nil
}
