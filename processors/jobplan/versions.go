package jobplan

import "github.com/ordoplane/ordo/events"

// DiffJobs returns the diff of two versions of a job, as GET
// /v1/job/:id/versions?diffs=true shows them (commands/httpapi.JobDiffer):
// Diff without the plan's updates, and without Stable, which a version's
// deployment sets and which is not part of its spec.
func (Planner) DiffJobs(oldJob, newJob *events.Job) any {
	o, n := *oldJob, *newJob
	o.Stable, n.Stable = false, false
	return Diff(&o, &n, nil)
}
