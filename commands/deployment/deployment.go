package deployment

import (
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/alloc"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
)

// Status descriptions, as Nomad words them.
const (
	DescriptionRunning  = "Deployment is running"
	DescriptionPaused   = "Deployment is paused"
	DescriptionFailed   = "Deployment marked as failed"
	DescriptionPromoted = "Deployment is running after promotion"
)

// Promote promotes a deployment's canaries: every group, or the groups
// named, which must then be every group with canaries (the event promotes
// all at once).
type Promote struct {
	ID     string
	All    bool
	Groups []string
}

// Fail marks a deployment failed.
type Fail struct {
	ID string
}

// Pause pauses (Pause true) or resumes (Pause false) a deployment.
type Pause struct {
	ID    string
	Pause bool
}

var (
	_ commands.Command = Promote{}
	_ commands.Command = Fail{}
	_ commands.Command = Pause{}
)

func validID(id string) error {
	if id == "" || len(id) > 128 {
		return commands.Invalid("DeploymentID", "must be 1-128 bytes")
	}
	return nil
}

// Validate implements commands.Command.
func (p Promote) Validate() error {
	if err := validID(p.ID); err != nil {
		return err
	}
	if !p.All && len(p.Groups) == 0 {
		return commands.Invalid("Groups", "name the groups to promote, or set All")
	}
	return nil
}

// Validate implements commands.Command.
func (f Fail) Validate() error { return validID(f.ID) }

// Validate implements commands.Command.
func (p Pause) Validate() error { return validID(p.ID) }

// Decide implements commands.Command.
func (p Promote) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	d, err := active(v, p.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	var canaries []string
	for name, g := range d.TaskGroups {
		if g != nil && g.DesiredCanaries > 0 {
			canaries = append(canaries, name)
		}
	}
	sort.Strings(canaries)
	if len(canaries) == 0 {
		return commands.Decision{}, commands.Invalid("DeploymentID", "deployment %s has no canaries to promote", d.ID)
	}
	if !p.All {
		for _, g := range p.Groups {
			if !slices.Contains(canaries, g) {
				return commands.Decision{}, commands.Invalid("Groups", "group %q has no canaries in deployment %s", g, d.ID)
			}
		}
		for _, g := range canaries {
			if !slices.Contains(p.Groups, g) {
				return commands.Decision{}, commands.Invalid("Groups", "promote every group with canaries (%v) at once, or set All", canaries)
			}
		}
	}
	if d.Status == events.DeploymentStatusPaused {
		return commands.Decision{}, conflict(d, "a paused deployment cannot be promoted; resume it first")
	}
	return decide(v, d, &events.DeploymentStatusUpdated{ID: d.ID, Status: events.DeploymentStatusRunning, StatusDescription: DescriptionPromoted, Promote: true}, now, ids, true), nil
}

// Decide implements commands.Command.
func (f Fail) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	d, err := active(v, f.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	return decide(v, d, &events.DeploymentStatusUpdated{ID: d.ID, Status: events.DeploymentStatusFailed, StatusDescription: DescriptionFailed}, now, ids, true), nil
}

// Decide implements commands.Command.
func (p Pause) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	d, err := active(v, p.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	paused := d.Status == events.DeploymentStatusPaused
	if paused == p.Pause {
		return commands.Decision{}, nil
	}
	if p.Pause {
		return decide(v, d, &events.DeploymentStatusUpdated{ID: d.ID, Status: events.DeploymentStatusPaused, StatusDescription: DescriptionPaused}, now, ids, false), nil
	}
	return decide(v, d, &events.DeploymentStatusUpdated{ID: d.ID, Status: events.DeploymentStatusRunning, StatusDescription: DescriptionRunning}, now, ids, true), nil
}

// active returns the deployment id if it is still in progress.
func active(v projections.View, id string) (*deployments.Deployment, error) {
	d, err := deployments.Get(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, &commands.NotFoundError{Kind: "deployment", ID: id}
	} else if err != nil {
		return nil, err
	}
	if !d.Active() {
		return nil, conflict(d, "deployment is "+d.Status+"; only an active deployment can change")
	}
	return d, nil
}

func conflict(d *deployments.Deployment, reason string) error {
	return &commands.ConflictError{Precondition: events.Precondition{Table: deployments.Table, Key: d.ID, Op: events.ModifyIndex, Index: d.ModifyIndex}, Reason: reason}
}

// decide returns the status update with the deployment's modify index as a
// precondition and, with eval, a pending eval for its job.
func decide(v projections.View, d *deployments.Deployment, up *events.DeploymentStatusUpdated, now time.Time, ids commands.IDs, eval bool) commands.Decision {
	dec := commands.Decision{
		Events:        []events.Payload{up},
		Preconditions: []events.Precondition{{Table: deployments.Table, Key: d.ID, Op: events.ModifyIndex, Index: d.ModifyIndex}},
	}
	if eval {
		prio, typ := alloc.JobEvalDefaults(v, d.Namespace, d.JobID)
		dec.Events = append(dec.Events, &events.EvalsUpserted{Evals: []events.Evaluation{{ID: ids(), Namespace: d.Namespace,
			Priority: prio, Type: typ, TriggeredBy: events.EvalTriggerDeploymentWatcher, JobID: d.JobID,
			DeploymentID: d.ID, Status: events.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}}})
	}
	return dec
}
