package node

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// DrainSpec is how a drain should run, as Nomad's api.DrainSpec.
type DrainSpec struct {
	// Deadline bounds how long allocations may take to migrate; 0 means no
	// deadline, a negative value forces the drain at once.
	Deadline         time.Duration
	IgnoreSystemJobs bool
}

// UpdateDrain starts, changes or (with a nil Spec) stops a node's drain.
type UpdateDrain struct {
	ID   string
	Spec *DrainSpec
	// MarkEligible makes the node eligible again when the drain stops.
	MarkEligible bool
}

var _ commands.Command = UpdateDrain{}

// Validate implements commands.Command.
func (u UpdateDrain) Validate() error {
	if err := ValidID("ID", u.ID); err != nil {
		return err
	}
	if u.Spec != nil && u.MarkEligible {
		return commands.Invalid("MarkEligible", "applies only when stopping a drain")
	}
	return nil
}

// Decide implements commands.Command. A drain started now gets now as its
// start and now+Deadline as its force deadline; changing a running drain
// keeps its start. Starting a drain only records it and makes the node
// ineligible: the leader's drainer (processors/drainer) then marks the
// node's allocations to migrate, a few at a time (MarkMigrate), and ends
// the drain when nothing is left (CompleteDrain). Stopping a drain with
// MarkEligible on an ineligible node re-evaluates the jobs that may place
// on it (system jobs), in the same entry.
func (u UpdateDrain) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	n, err := lookup(v, u.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	ev := &events.NodeDrainUpdated{ID: u.ID, MarkEligible: u.MarkEligible}
	if u.Spec == nil {
		if !n.Drain && (!u.MarkEligible || n.SchedulingEligibility == events.NodeEligible) {
			return commands.Decision{}, nil
		}
	} else {
		ds := &events.DrainStrategy{Deadline: int64(u.Spec.Deadline), IgnoreSystemJobs: u.Spec.IgnoreSystemJobs,
			StartedAt: now.UnixNano()}
		if n.DrainStrategy != nil {
			ds.StartedAt = n.DrainStrategy.StartedAt
		}
		switch {
		case u.Spec.Deadline > 0:
			ds.ForceDeadline = now.Add(u.Spec.Deadline).UnixNano()
		case u.Spec.Deadline < 0:
			ds.ForceDeadline = now.UnixNano()
		}
		ev.DrainStrategy = ds
	}
	d := commands.Decision{Events: []events.Payload{ev}, Preconditions: unchangedSince(n)}
	if u.Spec == nil && u.MarkEligible && n.SchedulingEligibility != events.NodeEligible {
		return withNodeEvals(d, v, u.ID, events.EvalTriggerNodeUpdate, now, ids)
	}
	return d, nil
}
