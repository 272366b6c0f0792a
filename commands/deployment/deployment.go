package deployment

import (
	"errors"
	"fmt"
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

// ErrCanariesUnhealthy is the reason a promotion is refused while a group
// to promote has fewer healthy canaries than it asks for.
var ErrCanariesUnhealthy = errors.New("not all canaries are healthy")

// Promote promotes a deployment's canaries: every group that has them
// (All), or the groups named. Each group promoted must have as many
// healthy canaries running as it asks for. Promoted groups replace their
// remaining outdated allocations, max_parallel at a time.
type Promote struct {
	ID     string
	All    bool
	Groups []string
}

// Fail marks a deployment failed; with auto_revert on a group, the job's
// latest stable version is registered again (see Revert).
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
	groups := canaries
	if !p.All {
		groups = nil
		for _, g := range p.Groups {
			if !slices.Contains(canaries, g) {
				return commands.Decision{}, commands.Invalid("Groups", "group %q has no canaries in deployment %s", g, d.ID)
			}
			if !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
		sort.Strings(groups)
	}
	if d.Status == events.DeploymentStatusPaused {
		return commands.Decision{}, conflict(d, "a paused deployment cannot be promoted; resume it first")
	}
	groups = slices.DeleteFunc(groups, func(g string) bool { return d.TaskGroups[g].Promoted })
	if len(groups) == 0 {
		return commands.Decision{}, nil
	}
	// What the promotion depends on, checked again at apply: the
	// deployment still runs and each group's canaries are still healthy.
	pre := []events.Precondition{deployments.Unpaused(d.ID)}
	for _, g := range groups {
		st := d.TaskGroups[g]
		healthy, err := deployments.HealthyCanaries(v, st)
		if err != nil {
			return commands.Decision{}, err
		}
		if healthy < st.DesiredCanaries {
			return commands.Decision{}, &commands.ConflictError{
				Reason: fmt.Sprintf("%v: group %q has %d of %d canaries healthy", ErrCanariesUnhealthy, g, healthy, st.DesiredCanaries)}
		}
		pre = append(pre, deployments.CanariesHealthy(d.ID, g))
	}
	up := &events.DeploymentStatusUpdated{ID: d.ID, Status: events.DeploymentStatusRunning, StatusDescription: DescriptionPromoted,
		Promote: true, Groups: groups}
	// The progress deadline counts from the promotion.
	version := jobVersion(v, d.Namespace, d.JobID, d.JobVersion)
	for _, g := range groups {
		if u := updateOf(version, g); u != nil && u.ProgressDeadline > 0 {
			setProgressBy(up, g, now.Add(u.ProgressDeadline))
		}
	}
	dec := commands.Decision{Events: []events.Payload{up}, Preconditions: pre}
	dec.Events = append(dec.Events, evalFor(v, d, now, ids))
	return dec, nil
}

// Decide implements commands.Command.
func (f Fail) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	d, err := active(v, f.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	rollback := false
	for _, g := range d.TaskGroups {
		rollback = rollback || (g != nil && g.AutoRevert)
	}
	desc, reg, err := Revert(v, &d.Deployment, DescriptionFailed, rollback, now, ids)
	if err != nil {
		return commands.Decision{}, err
	}
	dec := decide(v, d, &events.DeploymentStatusUpdated{ID: d.ID, Status: events.DeploymentStatusFailed, StatusDescription: desc}, now, ids, len(reg.Events) == 0)
	dec.Events = append(dec.Events, reg.Events...)
	dec.Preconditions = append(dec.Preconditions, reg.Preconditions...)
	return dec, nil
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
	// Resumed: the progress deadlines count from now, as no progress could
	// be made while paused.
	up := &events.DeploymentStatusUpdated{ID: d.ID, Status: events.DeploymentStatusRunning, StatusDescription: DescriptionRunning}
	version := jobVersion(v, d.Namespace, d.JobID, d.JobVersion)
	for _, g := range sortedGroups(d) {
		if u, st := updateOf(version, g), d.TaskGroups[g]; st.RequireProgressBy != 0 && u != nil && u.ProgressDeadline > 0 {
			setProgressBy(up, g, now.Add(u.ProgressDeadline))
		}
	}
	return decide(v, d, up, now, ids, true), nil
}

// setProgressBy records group's new progress deadline in up.
func setProgressBy(up *events.DeploymentStatusUpdated, group string, by time.Time) {
	if up.RequireProgressBy == nil {
		up.RequireProgressBy = map[string]int64{}
	}
	up.RequireProgressBy[group] = by.UnixNano()
}

// sortedGroups returns the names of d's groups, sorted.
func sortedGroups(d *deployments.Deployment) []string {
	var out []string
	for name, st := range d.TaskGroups {
		if st != nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
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

// decide returns the status update with the precondition that the
// deployment is still in progress (what a user's change depends on; not
// its modify index, which the watcher moves as it counts) and, with eval,
// a pending eval for its job.
func decide(v projections.View, d *deployments.Deployment, up events.Payload, now time.Time, ids commands.IDs, eval bool) commands.Decision {
	dec := commands.Decision{
		Events:        []events.Payload{up},
		Preconditions: []events.Precondition{deployments.Active(d.ID)},
	}
	if eval {
		dec.Events = append(dec.Events, evalFor(v, d, now, ids))
	}
	return dec
}

// evalFor returns a pending eval of d's job, so the scheduler acts on d's change.
func evalFor(v projections.View, d *deployments.Deployment, now time.Time, ids commands.IDs) *events.EvalsUpserted {
	prio, typ := alloc.JobEvalDefaults(v, d.Namespace, d.JobID)
	return &events.EvalsUpserted{Evals: []events.Evaluation{{ID: ids(), Namespace: d.Namespace,
		Priority: prio, Type: typ, TriggeredBy: events.EvalTriggerDeploymentWatcher, JobID: d.JobID,
		DeploymentID: d.ID, Status: events.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}}}
}

// clone returns a deep copy of d.
func clone(d *events.Deployment) *events.Deployment {
	c := *d
	c.TaskGroups = make(map[string]*events.DeploymentState, len(d.TaskGroups))
	for name, g := range d.TaskGroups {
		if g != nil {
			cp := *g
			cp.PlacedCanaries = slices.Clone(g.PlacedCanaries)
			c.TaskGroups[name] = &cp
		}
	}
	return &c
}
