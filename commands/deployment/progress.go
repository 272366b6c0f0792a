package deployment

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
)

// Progress records what the deployment watcher (package deploywatch)
// decided about an active deployment: its new state, whole (group
// counts, canaries promoted by auto_promote, progress deadlines, status
// and description), decided on the deployment as it was at ModifyIndex.
type Progress struct {
	Deployment events.Deployment
	// ModifyIndex is the deployment's modify index the decision was made
	// on; a deployment changed since is a conflict, to be decided again.
	ModifyIndex uint64
	// Eval asks for a pending eval of the job (TriggeredBy
	// deployment-watcher), so the scheduler goes on.
	Eval bool
	// Revert, with a failed Deployment, registers the job's latest stable
	// version again in the same entry (auto_revert; see Revert).
	Revert bool
}

var _ commands.Command = Progress{}

// Validate implements commands.Command.
func (p Progress) Validate() error {
	if err := validID(p.Deployment.ID); err != nil {
		return err
	}
	switch p.Deployment.Status {
	case events.DeploymentStatusPending, events.DeploymentStatusRunning, events.DeploymentStatusPaused,
		events.DeploymentStatusFailed, events.DeploymentStatusSuccessful, events.DeploymentStatusCancelled:
	default:
		return commands.Invalid("Deployment.Status", "%q is not a status the watcher records", p.Deployment.Status)
	}
	if p.Revert && p.Deployment.Status != events.DeploymentStatusFailed {
		return commands.Invalid("Revert", "only a failed deployment reverts its job")
	}
	return nil
}

// Decide implements commands.Command. The deployment replaces the stored
// one whole, with the stored CreateTime and the leader time as ModifyTime.
func (p Progress) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	d, err := active(v, p.Deployment.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if d.ModifyIndex != p.ModifyIndex {
		return commands.Decision{}, conflict(d, "the deployment changed since the watcher read it")
	}
	nd := *clone(&p.Deployment)
	nd.Namespace, nd.JobID, nd.JobVersion = d.Namespace, d.JobID, d.JobVersion
	nd.CreateTime, nd.ModifyTime = d.CreateTime, now.UnixNano()
	var reg commands.Decision
	if p.Revert {
		if nd.StatusDescription, reg, err = Revert(v, &d.Deployment, nd.StatusDescription, true, now, ids); err != nil {
			return commands.Decision{}, err
		}
	}
	dec := commands.Decision{
		Events:        []events.Payload{&events.DeploymentUpserted{Deployment: nd}},
		Preconditions: []events.Precondition{{Table: deployments.Table, Key: d.ID, Op: events.ModifyIndex, Index: d.ModifyIndex}},
	}
	dec.Events = append(dec.Events, reg.Events...)
	dec.Preconditions = append(dec.Preconditions, reg.Preconditions...)
	if p.Eval && len(reg.Events) == 0 {
		dec.Events = append(dec.Events, evalFor(v, d, now, ids))
	}
	return dec, nil
}
