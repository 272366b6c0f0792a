package job

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Deregister stops a job (kept, with Stop set, at a new version) or, with
// Purge, removes it, as Nomad's Job.Deregister.
type Deregister struct {
	Namespace string
	ID        string
	Purge     bool
	// NoShutdownDelay stops the job's allocations without their tasks'
	// shutdown delay (N23).
	NoShutdownDelay bool
	// EvalPriority overrides the job's priority for the evaluation.
	EvalPriority int

	result Result
}

var _ commands.Command = (*Deregister)(nil)

// Result returns what the last Decide decided.
func (d *Deregister) Result() Result { return d.result }

// ValidID checks a job id given in a request, as a *commands.ValidationError.
// It applies jobspec.ValidID: a child's id (with a '/') is valid here.
func ValidID(field, id string) error { return jobspec.ValidID(field, id) }

// Validate implements commands.Command.
func (d *Deregister) Validate() error {
	if err := namespace.ValidName("namespace", d.Namespace); err != nil {
		return err
	}
	if err := ValidID("id", d.ID); err != nil {
		return err
	}
	return validPriority("eval_priority", d.EvalPriority)
}

// Decide implements commands.Command. Stopping a job that is stopped
// already records nothing new but still asks for an evaluation, as Nomad
// does; periodic and parameterized jobs get none.
func (d *Deregister) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	d.result = Result{}
	old, err := lookup(v, d.Namespace, d.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	dec := commands.Decision{Preconditions: []events.Precondition{unchangedSince(d.Namespace, d.ID, old)}}
	res := Result{JobID: d.ID, JobModifyIndex: old.JobModifyIndex}
	if d.Purge || !old.Stop {
		res.Changed, res.JobModifyIndex = true, 0
		dec.Events = append(dec.Events, &events.JobDeregistered{Namespace: d.Namespace, ID: d.ID, Purge: d.Purge,
			NoShutdownDelay: d.NoShutdownDelay})
	}
	if d.NoShutdownDelay {
		// N23: the job's live allocations learn, in the same entry, that
		// their stop skips the shutdown delay: the scheduler stops them
		// later, and the client reads the transition off each allocation.
		up, err := noShutdownDelay(v, d.Namespace, d.ID)
		if err != nil {
			return commands.Decision{}, err
		}
		if up != nil {
			dec.Events = append(dec.Events, up)
		}
	}
	if needsEval(&old.Job) {
		res.EvalID = ids()
		dec.Events = append(dec.Events, &events.EvalsUpserted{Evals: []events.Evaluation{
			newEval(res.EvalID, &old.Job, events.EvalTriggerJobDeregister, d.EvalPriority, res.JobModifyIndex, now)}})
	}
	d.result = res
	return dec, nil
}

// noShutdownDelay marks the job's non-terminal allocations'
// DesiredTransition.NoShutdownDelay; nil when there are none.
func noShutdownDelay(v projections.View, ns, id string) (*events.AllocsDesiredUpdated, error) {
	yes := true
	return markAllocs(v, ns, id, events.DesiredTransition{NoShutdownDelay: &yes}, func(a *events.Allocation) bool {
		return !a.Terminal() && (a.DesiredTransition.NoShutdownDelay == nil || !*a.DesiredTransition.NoShutdownDelay)
	})
}
