package alloc

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/jobs"
)

// The priority and type of the evals ordo creates for a job it cannot read:
// Nomad's defaults for a service job.
const (
	DefaultEvalPriority = 50
	DefaultEvalType     = "service"
)

// JobEvalDefaults returns the priority and type an eval for the job gets:
// the job's own, or Nomad's service defaults when the job is gone.
func JobEvalDefaults(v projections.View, namespace, jobID string) (int, string) {
	j, err := jobs.Get(v, namespace, jobID)
	if err != nil {
		return DefaultEvalPriority, DefaultEvalType
	}
	return j.Priority, j.Type
}

// StopDescription is the desired description of an allocation a user stopped.
const StopDescription = "alloc was stopped by a user"

// Stop asks for an allocation to stop and its job to be evaluated again.
type Stop struct {
	ID string
	// NoShutdownDelay asks the client to skip the tasks' shutdown delay (N23).
	NoShutdownDelay bool
}

var _ commands.Command = Stop{}

// Validate implements commands.Command.
func (s Stop) Validate() error { return ValidID("ID", s.ID) }

// Decide implements commands.Command. The eval it creates is the one eval
// of the alloc's job whose create index is the entry's: see CreatedEval.
func (s Stop) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	a, err := lookup(v, s.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	up := events.AllocDesiredUpdate{ID: a.ID, DesiredStatus: events.AllocDesiredStop, DesiredDescription: StopDescription}
	if s.NoShutdownDelay {
		yes := true
		up.DesiredTransition.NoShutdownDelay = &yes
	}
	prio, typ := JobEvalDefaults(v, a.Namespace, a.JobID)
	eval := events.Evaluation{ID: ids(), Namespace: a.Namespace, Priority: prio,
		Type: typ, TriggeredBy: events.EvalTriggerAllocStop, JobID: a.JobID, Status: events.EvalStatusPending,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
	return commands.Decision{
		Events: []events.Payload{
			&events.AllocsDesiredUpdated{EvalID: eval.ID, Updates: []events.AllocDesiredUpdate{up}},
			&events.EvalsUpserted{Evals: []events.Evaluation{eval}},
		},
		Preconditions: []events.Precondition{{Table: allocs.Table, Key: a.ID, Op: events.ModifyIndex, Index: a.ModifyIndex}},
	}, nil
}

// CreatedEval returns the eval the entry at index created for a job (the
// eval of a Stop that committed there), or "" when there is none.
func CreatedEval(v projections.View, namespace, job string, index uint64) (string, error) {
	list, err := evals.ByJob(v, namespace, job)
	if err != nil {
		return "", err
	}
	for _, e := range list {
		if e.CreateIndex == index {
			return e.ID, nil
		}
	}
	return "", nil
}

// lookup returns the alloc id, or a *commands.NotFoundError.
func lookup(v projections.View, id string) (*allocs.Alloc, error) {
	a, err := allocs.Get(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, &commands.NotFoundError{Kind: "allocation", ID: id}
	}
	return a, err
}
