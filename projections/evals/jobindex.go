package evals

import "github.com/ordoplane/ordo/events"

// CommittedJobModifyIndex returns e's JobModifyIndex once committed at
// index: an eval that (de)registers its job without one was created in
// the entry that changed the job, whose index the command could not know,
// so it gets that entry's index, as Nomad's register eval carries the
// register's. Any other eval keeps its own.
func CommittedJobModifyIndex(e *events.Evaluation, index uint64) uint64 {
	if e.JobModifyIndex != 0 || e.JobID == "" {
		return e.JobModifyIndex
	}
	switch e.TriggeredBy {
	case events.EvalTriggerJobRegister, events.EvalTriggerJobDeregister:
		return index
	}
	return e.JobModifyIndex
}
