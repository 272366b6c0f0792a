package jobplan

import (
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Planner is Plan for the HTTP API (commands/httpapi.JobPlanner): a dry
// run of registering a job, stamped with its clock.
type Planner struct {
	// Now is the clock of the plan's times (required; the agent passes
	// time.Now).
	Now func() time.Time
}

// PlanJob plans job on v, with its diff when diff is set.
func (p Planner) PlanJob(v projections.View, job *events.Job, diff bool) (any, error) {
	return Plan(v, job, Options{Diff: diff, Now: p.Now()})
}
