package job

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
)

// Register creates a job or updates its spec, as Nomad's Job.Register.
type Register struct {
	// Job is canonical (from jobspec.ParseHCL or ParseJSON).
	Job events.Job
	// EnforceIndex registers only if the job's JobModifyIndex is
	// JobModifyIndex; 0 means the job must not exist.
	EnforceIndex   bool
	JobModifyIndex uint64
	// EvalPriority overrides the job's priority for the evaluation; 0
	// keeps it.
	EvalPriority int
	// Management says the caller holds a management token: only such a
	// caller may register while the scheduler configuration rejects job
	// registration (reject.go).
	Management bool

	result Result
}

var _ commands.Command = (*Register)(nil)

// Result returns what the last Decide decided.
func (r *Register) Result() Result { return r.result }

// Validate implements commands.Command.
func (r *Register) Validate() error {
	if err := jobspec.Validate(&r.Job); err != nil {
		return err
	}
	if r.Job.Dispatched || r.Job.ParentID != "" || len(r.Job.Payload) > 0 {
		return commands.Invalid("job.parent_id", "ParentID, Dispatched and Payload are set by dispatch, not by registration")
	}
	if !r.EnforceIndex && r.JobModifyIndex != 0 {
		return commands.Invalid("JobModifyIndex", "applies only with EnforceIndex")
	}
	return validPriority("EvalPriority", r.EvalPriority)
}

// Decide implements commands.Command.
func (r *Register) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	if err := rejectRegistration(v, r.Management); err != nil {
		return commands.Decision{}, err
	}
	dec, res, err := decideRegister(v, &r.Job, r.EnforceIndex, r.JobModifyIndex, r.EvalPriority, now, ids)
	r.result = res
	return dec, err
}

// decideRegister decides the registration of job (ParentID, Dispatched and
// Payload included, for dispatch).
func decideRegister(v projections.View, spec *events.Job, enforce bool, enforceIndex uint64, evalPriority int,
	now time.Time, ids commands.IDs) (commands.Decision, Result, error) {
	var dec commands.Decision
	pre, err := namespaceExists(v, "job.namespace", spec.Namespace)
	if err != nil {
		return dec, Result{}, err
	}
	inPool, err := poolExists(v, spec)
	if err != nil {
		return dec, Result{}, err
	}
	pre = append(pre, inPool...)
	old, err := jobs.Get(v, spec.Namespace, spec.ID)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		old = nil
	case err != nil:
		return dec, Result{}, err
	}
	cas := unchangedSince(spec.Namespace, spec.ID, old)
	if enforce && cas.Index != enforceIndex {
		reason := fmt.Sprintf("enforcing job modify index %d: job exists with job modify index %d", enforceIndex, cas.Index)
		if old == nil {
			reason = fmt.Sprintf("enforcing job modify index %d: job does not exist", enforceIndex)
		}
		return dec, Result{}, &commands.ConflictError{Precondition: cas, Reason: reason}
	}
	dec.Preconditions = append(pre, cas)

	job := *spec
	job.Stop, job.Stable = false, false
	job.SubmitTime = now.UnixNano()
	res := Result{JobID: job.ID}
	if old == nil {
		job.Version = 0
		res.Changed = true
	} else if changed, err := specChanged(&old.Job, &job); err != nil {
		return dec, Result{}, err
	} else if changed {
		job.Version = old.Version + 1
		res.Changed = true
	} else {
		res.JobModifyIndex = old.JobModifyIndex
	}
	if res.Changed {
		dec.Events = append(dec.Events, &events.JobRegistered{Job: job})
	}
	if needsEval(&job) {
		res.EvalID = ids()
		dec.Events = append(dec.Events, &events.EvalsUpserted{Evals: []events.Evaluation{
			newEval(res.EvalID, &job, events.EvalTriggerJobRegister, evalPriority, res.JobModifyIndex, now)}})
	}
	if res.Changed {
		var createIndex uint64
		if old != nil {
			createIndex = old.CreateIndex
		}
		if d := newDeployment(&job, createIndex, now, ids); d != nil {
			res.DeploymentID = d.ID
			dec.Events = append(dec.Events, &events.DeploymentUpserted{Deployment: *d})
		}
	}
	return dec, res, nil
}

// specChanged reports whether b's spec differs from a's: their canonical
// encodings without the server's Version, SubmitTime and Stable.
func specChanged(a, b *events.Job) (bool, error) {
	ea, err := specBytes(*a)
	if err != nil {
		return false, err
	}
	eb, err := specBytes(*b)
	if err != nil {
		return false, err
	}
	return !bytes.Equal(ea, eb), nil
}

func specBytes(j events.Job) ([]byte, error) {
	j.Version, j.SubmitTime, j.Stable = 0, 0, false
	b, err := events.Marshal(&j)
	if err != nil {
		return nil, fmt.Errorf("encode job %q: %w", j.ID, err)
	}
	return b, nil
}

// newDeployment returns the deployment that rolls out job's new version,
// initializing (N3), or nil when the job is not a service job or no group
// has an update strategy with MaxParallel set.
func newDeployment(job *events.Job, jobCreateIndex uint64, now time.Time, ids commands.IDs) *events.Deployment {
	if job.Type != events.JobTypeService || !needsEval(job) {
		return nil
	}
	groups := map[string]*events.DeploymentState{}
	for _, tg := range job.TaskGroups {
		u := tg.Update
		if u == nil {
			u = job.Update
		}
		if u == nil || u.MaxParallel <= 0 {
			continue
		}
		groups[tg.Name] = &events.DeploymentState{AutoRevert: u.AutoRevert, DesiredCanaries: u.Canary,
			DesiredTotal: tg.Count, ProgressDeadline: u.ProgressDeadline}
	}
	if len(groups) == 0 {
		return nil
	}
	return &events.Deployment{ID: ids(), Namespace: job.Namespace, JobID: job.ID, JobVersion: job.Version,
		JobCreateIndex: jobCreateIndex, Status: events.DeploymentStatusInitializing,
		StatusDescription: DeploymentInitializingDescription, TaskGroups: groups,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
}

// The status descriptions of a deployment created at registration.
const (
	DeploymentInitializingDescription = "Deployment is initializing"
	DeploymentPendingDescription      = "Deployment is pending"
)
