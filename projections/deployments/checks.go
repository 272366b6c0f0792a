package deployments

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
)

// The preconditions of a user's change to a deployment. They assert what
// the user's intent depends on — the deployment is still in progress, not
// paused, its canaries healthy — and not its modify index, which the
// deployment watcher and the scheduler move as they record progress: a
// user's promote, pause, resume or fail never loses to that bookkeeping.
const (
	// ActiveOp asserts the deployment Key exists and is in progress
	// (initializing, pending, running or paused).
	ActiveOp events.PreconditionOp = "deployment-active"
	// UnpausedOp asserts the deployment Key is in progress and not paused.
	UnpausedOp events.PreconditionOp = "deployment-unpaused"
	// CanariesHealthyOp asserts that group G of deployment D (Key "D/G";
	// deployment ids have no slash) has at least as many live canaries
	// reported healthy as it asks for.
	CanariesHealthyOp events.PreconditionOp = "deployment-canaries-healthy"
)

// Active returns the precondition that deployment id is in progress.
func Active(id string) events.Precondition {
	return events.Precondition{Table: Table, Key: id, Op: ActiveOp}
}

// Unpaused returns the precondition that deployment id is in progress and
// not paused.
func Unpaused(id string) events.Precondition {
	return events.Precondition{Table: Table, Key: id, Op: UnpausedOp}
}

// CanariesHealthy returns the precondition that group of deployment id has
// all the healthy canaries it asks for.
func CanariesHealthy(id, group string) events.Precondition {
	return events.Precondition{Table: Table, Key: id + "/" + group, Op: CanariesHealthyOp}
}

func init() {
	projections.RegisterCheck(ActiveOp, func(v projections.View, p events.Precondition) string {
		_, reason := activeRow(v, p.Key)
		return reason
	})
	projections.RegisterCheck(UnpausedOp, func(v projections.View, p events.Precondition) string {
		d, reason := activeRow(v, p.Key)
		if reason == "" && d.Status == events.DeploymentStatusPaused {
			reason = "deployment is paused"
		}
		return reason
	})
	projections.RegisterCheck(CanariesHealthyOp, checkCanaries)
}

// activeRow returns deployment id, or why it is not in progress.
func activeRow(v projections.View, id string) (*Deployment, string) {
	d, err := Get(v, id)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		return nil, "deployment does not exist"
	case err != nil:
		return nil, err.Error()
	case !d.Active():
		return nil, "deployment is " + d.Status + "; only an active deployment can change"
	}
	return d, ""
}

func checkCanaries(v projections.View, p events.Precondition) string {
	id, group, _ := strings.Cut(p.Key, "/")
	d, reason := activeRow(v, id)
	if reason != "" {
		return reason
	}
	g := d.TaskGroups[group]
	if g == nil {
		return fmt.Sprintf("deployment has no group %q", group)
	}
	healthy, err := HealthyCanaries(v, g)
	if err != nil {
		return err.Error()
	}
	if healthy < g.DesiredCanaries {
		return fmt.Sprintf("not all canaries are healthy: group %q has %d of %d canaries healthy", group, healthy, g.DesiredCanaries)
	}
	return ""
}

// HealthyCanaries counts the live canaries of group state g reported
// healthy.
func HealthyCanaries(v projections.View, g *events.DeploymentState) (int, error) {
	n := 0
	for _, id := range g.PlacedCanaries {
		a, err := allocs.Get(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return 0, err
		}
		if !a.Terminal() && a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy {
			n++
		}
	}
	return n, nil
}
