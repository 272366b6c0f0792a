package job

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
)

// MarkDeploymentPending moves a deployment created at registration from
// initializing to pending once its initial state is persisted (N3). The
// deployment watcher issues it; nothing else moves a deployment out of
// initializing.
type MarkDeploymentPending struct {
	ID string
}

var _ commands.Command = MarkDeploymentPending{}

// Validate implements commands.Command.
func (m MarkDeploymentPending) Validate() error {
	if m.ID == "" {
		return commands.Invalid("ID", "must not be empty")
	}
	return nil
}

// Decide implements commands.Command. A deployment no longer initializing
// (cancelled by a newer version meanwhile) is left alone; the decision
// carries the deployment's modify index, so a change in between is a 409
// rather than an overwrite.
func (m MarkDeploymentPending) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	d, err := deployments.Get(v, m.ID)
	if errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "deployment", ID: m.ID}
	} else if err != nil {
		return commands.Decision{}, err
	}
	if d.Status != events.DeploymentStatusInitializing {
		return commands.Decision{}, nil
	}
	return commands.Decision{
		Events: []events.Payload{&events.DeploymentStatusUpdated{ID: m.ID, Status: events.DeploymentStatusPending,
			StatusDescription: DeploymentPendingDescription}},
		Preconditions: []events.Precondition{{Table: deployments.Table, Key: m.ID, Op: events.ModifyIndex, Index: d.ModifyIndex}},
	}, nil
}
