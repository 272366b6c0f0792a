package eval

import (
	"sort"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

// Update writes evals as given; Expect maps the id of each existing eval to
// the modify index it was read at (new evals are absent from it).
type Update struct {
	Evals  []events.Evaluation
	Expect map[string]uint64
}

var _ commands.Command = Update{}

// Validate implements commands.Command.
func (u Update) Validate() error {
	if len(u.Evals) == 0 {
		return commands.Invalid("Evals", "at least one eval is required")
	}
	for i, e := range u.Evals {
		if e.ID == "" || e.JobID == "" || e.Namespace == "" {
			return commands.Invalid("Evals", "eval %d lacks an id, job or namespace", i)
		}
		switch e.Status {
		case events.EvalStatusPending, events.EvalStatusBlocked, events.EvalStatusComplete,
			events.EvalStatusFailed, events.EvalStatusCanceled:
		default:
			return commands.Invalid("Evals", "eval %s has unknown status %q", e.ID, e.Status)
		}
	}
	return nil
}

// Decide implements commands.Command.
func (u Update) Decide(_ projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	ids := make([]string, 0, len(u.Expect))
	for id := range u.Expect {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var d commands.Decision
	for _, id := range ids {
		d.Preconditions = append(d.Preconditions, events.Precondition{Table: evals.Table, Key: id, Op: events.ModifyIndex, Index: u.Expect[id]})
	}
	d.Events = []events.Payload{&events.EvalsUpserted{Evals: u.Evals}}
	return d, nil
}
