package job

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Stability marks a version of a job stable or not, as Nomad's Job.Stable.
type Stability struct {
	Namespace string
	ID        string
	Version   uint64
	Stable    bool
}

var _ commands.Command = (*Stability)(nil)

// Validate implements commands.Command.
func (s *Stability) Validate() error {
	if err := namespace.ValidName("namespace", s.Namespace); err != nil {
		return err
	}
	return ValidID("id", s.ID)
}

// Decide implements commands.Command. The version must be kept; the
// decision holds while the job is unchanged.
func (s *Stability) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	cur, err := lookup(v, s.Namespace, s.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if _, err := version(v, s.Namespace, s.ID, s.Version); err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{
		Events:        []events.Payload{&events.JobStabilityUpdated{Namespace: s.Namespace, ID: s.ID, Version: s.Version, Stable: s.Stable}},
		Preconditions: []events.Precondition{unchangedSince(s.Namespace, s.ID, cur)},
	}, nil
}
