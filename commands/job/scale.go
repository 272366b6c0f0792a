package job

import (
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Scale changes a task group's count, or only records a message against
// it, as Nomad's Job.Scale: a count registers the job again with the new
// count (a new version when it differs) and an evaluation; either way a
// scaling event (events.JobScaled) is recorded in the same entry.
type Scale struct {
	Namespace string
	ID        string
	Group     string
	// Count is the group's new count; nil records the event alone.
	Count   *int64
	Message string
	// Error reports an autoscaler's failure; it carries no Count.
	Error bool
	Meta  map[string]any
	// JobModifyIndex, when not 0, scales only a job whose JobModifyIndex
	// it is.
	JobModifyIndex uint64

	result Result
}

var _ commands.Command = (*Scale)(nil)

// Result returns what the last Decide decided.
func (s *Scale) Result() Result { return s.result }

// Validate implements commands.Command.
func (s *Scale) Validate() error {
	if err := namespace.ValidName("namespace", s.Namespace); err != nil {
		return err
	}
	if err := ValidID("id", s.ID); err != nil {
		return err
	}
	switch {
	case s.Group == "":
		return commands.Invalid("Target.Group", "must name the task group to scale")
	case s.Count != nil && s.Error:
		return commands.Invalid("Count", "a scaling request reporting an error carries no count")
	case s.Count != nil && *s.Count < 0:
		return commands.Invalid("Count", "%d is negative", *s.Count)
	case s.Count != nil && *s.Count > jobspec.MaxGroupCount:
		return commands.Invalid("Count", "%d is larger than %d", *s.Count, jobspec.MaxGroupCount)
	}
	return nil
}

// Decide implements commands.Command.
func (s *Scale) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	s.result = Result{}
	cur, err := lookup(v, s.Namespace, s.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	tg := cur.Group(s.Group)
	if tg == nil {
		return commands.Decision{}, commands.Invalid("Target.Group", "job %q has no task group %q", s.ID, s.Group)
	}
	cas := unchangedSince(s.Namespace, s.ID, cur)
	if s.JobModifyIndex != 0 && s.JobModifyIndex != cur.JobModifyIndex {
		return commands.Decision{}, &commands.ConflictError{Precondition: cas, Reason: fmt.Sprintf(
			"enforcing job modify index %d: job exists with job modify index %d", s.JobModifyIndex, cur.JobModifyIndex)}
	}
	ev := events.ScalingEvent{Count: s.Count, PreviousCount: int64(tg.Count), Error: s.Error, Message: s.Message,
		Meta: events.CanonicalConfig(s.Meta), Time: now.UnixNano()}
	if len(ev.Meta) == 0 {
		ev.Meta = nil
	}
	var dec commands.Decision
	res := Result{JobID: s.ID, JobModifyIndex: cur.JobModifyIndex}
	if s.Count != nil {
		if err := s.check(cur.Type, cur.Stop, tg); err != nil {
			return commands.Decision{}, err
		}
		spec := cur.Job
		spec.TaskGroups = slices.Clone(spec.TaskGroups)
		spec.Group(s.Group).Count = int(*s.Count)
		if dec, res, err = decideRegister(v, &spec, true, cur.JobModifyIndex, 0, now, ids); err != nil {
			return commands.Decision{}, err
		}
		ev.EvalID = res.EvalID
	} else {
		dec.Preconditions = []events.Precondition{cas}
	}
	dec.Events = append(dec.Events, &events.JobScaled{Namespace: s.Namespace, JobID: s.ID, Group: s.Group, Event: ev})
	s.result = res
	return dec, nil
}

// check refuses a count the job cannot take: system jobs, stopped,
// periodic and parameterized jobs do not scale, and the group's scaling
// block bounds the count.
func (s *Scale) check(typ string, stopped bool, tg *events.TaskGroup) error {
	n := *s.Count
	switch {
	case typ == events.JobTypeSystem || typ == events.JobTypeSysbatch:
		return commands.Invalid("id", "%s jobs run one allocation per node and do not scale", typ)
	case stopped:
		return commands.Invalid("id", "job %q is stopped: run it again to scale it", s.ID)
	case tg.Scaling != nil && n < tg.Scaling.Min:
		return commands.Invalid("Count", "group count %d is less than the scaling policy's minimum %d", n, tg.Scaling.Min)
	case tg.Scaling != nil && n > tg.Scaling.Max:
		return commands.Invalid("Count", "group count %d is greater than the scaling policy's maximum %d", n, tg.Scaling.Max)
	}
	return nil
}
