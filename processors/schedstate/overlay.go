package schedstate

import (
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// JobOverlay is a scheduler.State that answers Job with a job not yet
// registered: the job a plan (dry run) would register, over the current
// State. Every other read goes to State; the overlay changes nothing.
type JobOverlay struct {
	scheduler.State
	// NewJob replaces the stored job with its namespace and id, and is
	// its version NewJob.Version. (Not named Job: that is the method.)
	NewJob *events.Job
}

var _ scheduler.State = JobOverlay{}

func (o JobOverlay) is(namespace, id string) bool {
	return o.NewJob != nil && o.NewJob.Namespace == namespace && o.NewJob.ID == id
}

// Job implements scheduler.State.
func (o JobOverlay) Job(namespace, id string) (*events.Job, bool) {
	if o.is(namespace, id) {
		return o.NewJob, true
	}
	return o.State.Job(namespace, id)
}

// JobVersion implements scheduler.State.
func (o JobOverlay) JobVersion(namespace, id string, version uint64) (*events.Job, bool) {
	if o.is(namespace, id) && version == o.NewJob.Version {
		return o.NewJob, true
	}
	return o.State.JobVersion(namespace, id, version)
}
