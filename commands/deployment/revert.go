package deployment

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/jobs"
)

// StableVersion returns the job's latest stable version before d's: the
// highest job version below d.JobVersion whose deployment succeeded (a
// version becomes stable when its deployment succeeds), with its spec as
// stored; ok is false when there is none or its spec is no longer kept.
func StableVersion(v projections.View, d *events.Deployment) (*events.Job, bool, error) {
	list, err := deployments.ByJob(v, d.Namespace, d.JobID)
	if err != nil {
		return nil, false, err
	}
	found, best := false, uint64(0)
	for _, o := range list {
		if o.Status == events.DeploymentStatusSuccessful && o.JobVersion < d.JobVersion && (!found || o.JobVersion > best) {
			found, best = true, o.JobVersion
		}
	}
	if !found {
		return nil, false, nil
	}
	j := jobVersion(v, d.Namespace, d.JobID, best)
	return j, j != nil, nil
}

// Revert decides what a failing deployment d does about its job when
// rollback is asked (auto_revert): it registers the job's latest stable
// version (StableVersion) again as a new version, in the same entry, and
// returns base with Nomad's account of it appended. Without rollback, or
// when there is nothing to revert to, the decision is empty.
func Revert(v projections.View, d *events.Deployment, base string, rollback bool, now time.Time, ids commands.IDs) (string, commands.Decision, error) {
	if !rollback {
		return base, commands.Decision{}, nil
	}
	cur, err := jobs.Get(v, d.Namespace, d.JobID)
	if errors.Is(err, projections.ErrNotFound) {
		return base, commands.Decision{}, nil
	} else if err != nil {
		return "", commands.Decision{}, err
	}
	if cur.Stop || cur.Version != d.JobVersion {
		// Stopped, or already changed since: nothing to revert.
		return base, commands.Decision{}, nil
	}
	stable, ok, err := StableVersion(v, d)
	if err != nil {
		return "", commands.Decision{}, err
	}
	if !ok {
		return base + " - no stable job version to auto revert to", commands.Decision{}, nil
	}
	same, err := sameSpec(&cur.Job, stable)
	if err != nil {
		return "", commands.Decision{}, err
	}
	if same {
		return fmt.Sprintf("%s - not rolling back to stable job version %d as current job has same specification", base, stable.Version), commands.Decision{}, nil
	}
	spec := *stable
	reg := &job.Register{Job: spec, EnforceIndex: true, JobModifyIndex: cur.JobModifyIndex}
	if err := reg.Validate(); err != nil {
		return "", commands.Decision{}, fmt.Errorf("revert job %q to version %d: %w", d.JobID, stable.Version, err)
	}
	dec, err := reg.Decide(v, now, ids)
	if err != nil {
		return "", commands.Decision{}, fmt.Errorf("revert job %q to version %d: %w", d.JobID, stable.Version, err)
	}
	return fmt.Sprintf("%s - rolling back to job version %d", base, stable.Version), dec, nil
}

// sameSpec reports whether two versions of a job have the same spec: their
// canonical encodings without Version, SubmitTime and Stop.
func sameSpec(a, b *events.Job) (bool, error) {
	ea, err := specBytes(*a)
	if err != nil {
		return false, err
	}
	eb, err := specBytes(*b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ea, eb), nil
}

func specBytes(j events.Job) ([]byte, error) {
	j.Version, j.SubmitTime, j.Stop, j.Stable = 0, 0, false, false
	b, err := events.Marshal(&j)
	if err != nil {
		return nil, fmt.Errorf("encode job %q: %w", j.ID, err)
	}
	return b, nil
}

// jobVersion returns version of job id in ns, nil when it is not kept.
func jobVersion(v projections.View, ns, id string, version uint64) *events.Job {
	vs, err := jobs.Versions(v, ns, id)
	if err != nil {
		return nil
	}
	for _, j := range vs {
		if j.Version == version {
			return &j.Job
		}
	}
	return nil
}

// updateOf returns group g's update strategy in job, nil when none.
func updateOf(job *events.Job, g string) *events.UpdateStrategy {
	if job == nil {
		return nil
	}
	for i := range job.TaskGroups {
		if job.TaskGroups[i].Name == g {
			return job.TaskGroups[i].Update
		}
	}
	return nil
}
