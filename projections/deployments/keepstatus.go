package deployments

import (
	"errors"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

func init() { projections.RegisterExpander("DeploymentUpserted", keepStatus) }

// keepStatus completes, at apply, a deployment replaced whole: it keeps
// the stored status and description when the deployment is finished, or
// paused and the replacement would have it run again. The processors
// that replace a deployment whole decided on an earlier copy of it — the
// scheduler records the canaries it places on the copy it read when it
// computed its plan — and must not undo a user's pause or fail (or the
// watcher's end) committed meanwhile: a user's change never loses to a
// processor's bookkeeping. No writer resumes or revives a deployment by
// replacing it (a user's resume is a DeploymentStatusUpdated), so this
// refuses nothing a writer means. The archive keeps the completed event.
func keepStatus(v projections.View, _ int64, p events.Payload) (events.Payload, string, error) {
	up, ok := p.(*events.DeploymentUpserted)
	if !ok {
		return p, "", nil
	}
	stored, err := Get(v, up.Deployment.ID)
	if errors.Is(err, projections.ErrNotFound) {
		return p, "", nil
	} else if err != nil {
		return nil, "", err
	}
	next := &up.Deployment
	resumed := stored.Status == events.DeploymentStatusPaused && next.Active() && next.Status != events.DeploymentStatusPaused
	if stored.Active() && !resumed {
		return p, "", nil
	}
	out := *up
	out.Deployment.Status, out.Deployment.StatusDescription = stored.Status, stored.StatusDescription
	return &out, "", nil
}
