package job

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// Result is what a job command decided.
type Result struct {
	// JobID is the job registered: the dispatched child for Dispatch.
	JobID string
	// EvalID is the evaluation created; "" when none was (periodic and
	// parameterized jobs).
	EvalID string
	// DeploymentID is the deployment created, if any.
	DeploymentID string
	// Changed reports that the job's spec changed, so the entry's index is
	// its new JobModifyIndex; otherwise JobModifyIndex is the unchanged one.
	Changed        bool
	JobModifyIndex uint64
}

// lookup returns job id in ns, or a *commands.NotFoundError.
func lookup(v projections.View, ns, id string) (*jobs.Job, error) {
	j, err := jobs.Get(v, ns, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, &commands.NotFoundError{Kind: "job", ID: id}
	}
	return j, err
}

// unchangedSince is the precondition that job key in ns is as read: its
// modify index, 0 when it did not exist.
func unchangedSince(ns, id string, j *jobs.Job) events.Precondition {
	p := events.Precondition{Table: jobs.Table, Key: jobs.Key(ns, id), Op: events.ModifyIndex}
	if j != nil {
		p.Index = j.ModifyIndex
	}
	return p
}

// namespaceExists checks that ns exists and returns the precondition that
// it still does at apply; the default namespace always exists.
func namespaceExists(v projections.View, field, ns string) ([]events.Precondition, error) {
	if ns == namespaces.Default {
		return nil, nil
	}
	if _, err := namespaces.Get(v, ns); errors.Is(err, projections.ErrNotFound) {
		return nil, commands.Invalid(field, "namespace %q does not exist", ns)
	} else if err != nil {
		return nil, err
	}
	return []events.Precondition{{Table: namespaces.Table, Key: ns, Op: events.Exists}}, nil
}

// needsEval reports whether registering or stopping job creates an
// evaluation: periodic and parameterized jobs only launch children.
func needsEval(j *events.Job) bool { return !jobs.Periodic(j) && !jobs.Parameterized(j) }

// newEval returns a pending evaluation of job.
func newEval(id string, job *events.Job, trigger string, priority int, jobModifyIndex uint64, now time.Time) events.Evaluation {
	if priority == 0 {
		priority = job.Priority
	}
	return events.Evaluation{ID: id, Namespace: job.Namespace, Priority: priority, Type: job.Type,
		TriggeredBy: trigger, JobID: job.ID, JobModifyIndex: jobModifyIndex, Status: events.EvalStatusPending,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
}

func validPriority(field string, p int) error {
	if p != 0 && (p < 1 || p > 100) {
		return commands.Invalid(field, "%d is not between 1 and 100", p)
	}
	return nil
}

// shortHex returns 8 hex digits derived from id, for dispatched job ids.
func shortHex(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}
