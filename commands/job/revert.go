package job

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
)

// Revert registers a prior version of a job's spec again, as a new
// version, as Nomad's Job.Revert.
type Revert struct {
	Namespace string
	ID        string
	// Version is the version whose spec is registered again.
	Version uint64
	// EnforcePriorVersion, when set, reverts only if the job's current
	// version is this one.
	EnforcePriorVersion *uint64

	result Result
}

var _ commands.Command = (*Revert)(nil)

// Result returns what the last Decide decided.
func (r *Revert) Result() Result { return r.result }

// Validate implements commands.Command.
func (r *Revert) Validate() error {
	if err := namespace.ValidName("namespace", r.Namespace); err != nil {
		return err
	}
	return ValidID("id", r.ID)
}

// Decide implements commands.Command.
func (r *Revert) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	r.result = Result{}
	cur, err := lookup(v, r.Namespace, r.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if p := r.EnforcePriorVersion; p != nil && *p != cur.Version {
		return commands.Decision{}, &commands.ConflictError{Precondition: unchangedSince(r.Namespace, r.ID, cur),
			Reason: fmt.Sprintf("current job has version %d; enforcing version %d", cur.Version, *p)}
	}
	if r.Version == cur.Version {
		return commands.Decision{}, commands.Invalid("JobVersion", "can't revert to the current version %d", r.Version)
	}
	old, err := version(v, r.Namespace, r.ID, r.Version)
	if err != nil {
		return commands.Decision{}, err
	}
	spec := old.Job
	spec.ParentID, spec.Dispatched, spec.Payload = cur.ParentID, cur.Dispatched, cur.Payload
	dec, res, err := decideRegister(v, &spec, true, cur.JobModifyIndex, 0, now, ids)
	if err != nil {
		return commands.Decision{}, err
	}
	r.result = res
	return dec, nil
}

// version returns version n of job id in ns, or a *commands.NotFoundError.
func version(v projections.View, ns, id string, n uint64) (*jobs.Job, error) {
	vs, err := jobs.Versions(v, ns, id)
	if err != nil {
		return nil, err
	}
	for _, j := range vs {
		if j.Version == n {
			return j, nil
		}
	}
	return nil, &commands.NotFoundError{Kind: "job version", ID: fmt.Sprintf("%s@%d", id, n)}
}
