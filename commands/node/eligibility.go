package node

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// UpdateEligibility makes a node eligible or ineligible for scheduling.
type UpdateEligibility struct {
	ID          string
	Eligibility string
}

var _ commands.Command = UpdateEligibility{}

// Validate implements commands.Command.
func (u UpdateEligibility) Validate() error {
	if err := ValidID("ID", u.ID); err != nil {
		return err
	}
	if u.Eligibility != events.NodeEligible && u.Eligibility != events.NodeIneligible {
		return commands.Invalid("Eligibility", "%q is neither %q nor %q", u.Eligibility, events.NodeEligible, events.NodeIneligible)
	}
	return nil
}

// Decide implements commands.Command. A draining node cannot be made
// eligible: stop the drain with MarkEligible instead.
func (u UpdateEligibility) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	n, err := lookup(v, u.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if u.Eligibility == events.NodeEligible && n.Drain {
		return commands.Decision{}, commands.Invalid("Eligibility", "node %s is draining; stop the drain to make it eligible", n.ID)
	}
	if n.SchedulingEligibility == u.Eligibility {
		return commands.Decision{}, nil
	}
	return commands.Decision{
		Events:        []events.Payload{&events.NodeEligibilityUpdated{ID: u.ID, Eligibility: u.Eligibility}},
		Preconditions: unchangedSince(n),
	}, nil
}
