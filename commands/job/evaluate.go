package job

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
)

// Evaluate asks for a new evaluation of a job as it stands, as Nomad's
// Job.Evaluate; with ForceReschedule, the job's failed allocations are
// marked to be rescheduled in the same entry, even those whose reschedule
// policy is exhausted.
type Evaluate struct {
	Namespace       string
	ID              string
	ForceReschedule bool

	result Result
}

var _ commands.Command = (*Evaluate)(nil)

// Result returns what the last Decide decided.
func (e *Evaluate) Result() Result { return e.result }

// Validate implements commands.Command.
func (e *Evaluate) Validate() error {
	if err := namespace.ValidName("namespace", e.Namespace); err != nil {
		return err
	}
	return ValidID("id", e.ID)
}

// Decide implements commands.Command. Periodic and parameterized jobs are
// refused, as Nomad does: they only launch children.
func (e *Evaluate) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	e.result = Result{}
	cur, err := lookup(v, e.Namespace, e.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	switch {
	case cur.Periodic != nil && cur.Periodic.Enabled:
		return commands.Decision{}, commands.Invalid("id", "job %q is periodic: it cannot be evaluated", e.ID)
	case cur.ParameterizedJob != nil && !cur.Dispatched:
		return commands.Decision{}, commands.Invalid("id", "job %q is parameterized: it cannot be evaluated", e.ID)
	}
	dec := commands.Decision{Preconditions: []events.Precondition{unchangedSince(e.Namespace, e.ID, cur)}}
	if e.ForceReschedule {
		up, err := forceReschedule(v, e.Namespace, e.ID)
		if err != nil {
			return commands.Decision{}, err
		}
		if up != nil {
			dec.Events = append(dec.Events, up)
		}
	}
	res := Result{JobID: e.ID, JobModifyIndex: cur.JobModifyIndex, EvalID: ids()}
	dec.Events = append(dec.Events, &events.EvalsUpserted{Evals: []events.Evaluation{
		newEval(res.EvalID, &cur.Job, events.EvalTriggerJobRegister, 0, cur.JobModifyIndex, now)}})
	e.result = res
	return dec, nil
}

// forceReschedule marks the job's failed allocations
// DesiredTransition.ForceReschedule; nil when there are none to mark.
func forceReschedule(v projections.View, ns, id string) (*events.AllocsDesiredUpdated, error) {
	yes := true
	return markAllocs(v, ns, id, events.DesiredTransition{ForceReschedule: &yes}, func(a *events.Allocation) bool {
		return a.ClientStatus == events.AllocClientFailed &&
			(a.DesiredTransition.ForceReschedule == nil || !*a.DesiredTransition.ForceReschedule)
	})
}

// markAllocs sets dt on each allocation of job id in ns that want
// selects; nil when it selects none.
func markAllocs(v projections.View, ns, id string, dt events.DesiredTransition, want func(*events.Allocation) bool) (*events.AllocsDesiredUpdated, error) {
	list, err := allocs.ByJob(v, ns, id)
	if err != nil {
		return nil, err
	}
	var up []events.AllocDesiredUpdate
	for _, a := range list {
		if want(&a.Allocation) {
			up = append(up, events.AllocDesiredUpdate{ID: a.ID, DesiredTransition: dt})
		}
	}
	if len(up) == 0 {
		return nil, nil
	}
	return &events.AllocsDesiredUpdated{Updates: up}, nil
}
