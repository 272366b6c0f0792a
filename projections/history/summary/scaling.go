package summary

import (
	"fmt"

	"github.com/ordoplane/ordo/events"
)

func init() {
	register("JobScaled", func(s *step, p events.Payload) string { return jobScaled(s, p.(*events.JobScaled)) })
	register("JobStabilityUpdated", func(s *step, p events.Payload) string {
		return jobStability(s, p.(*events.JobStabilityUpdated))
	})
}

// jobScaled says what a scaling request asked of a group: a new count, or
// only a message (an autoscaler's report, an error).
func jobScaled(s *step, p *events.JobScaled) string {
	e := p.Event
	what := "scaling message"
	if e.Error {
		what = "scaling error"
	}
	if e.Count != nil {
		what = fmt.Sprintf("scaled group %s from %d to %d", p.Group, e.PreviousCount, *e.Count)
	} else {
		what += " for group " + p.Group
	}
	if e.Message != "" {
		what += ": " + e.Message
	}
	if s.t.kind != events.KindJob {
		return "job " + p.JobID + " " + what
	}
	return what
}

// jobStability says which version an operator marked stable or unstable.
func jobStability(s *step, p *events.JobStabilityUpdated) string {
	mark := "unstable"
	if p.Stable {
		mark = "stable"
	}
	if s.t.kind != events.KindJob {
		return fmt.Sprintf("job %s version %d marked %s", p.ID, p.Version, mark)
	}
	return fmt.Sprintf("version %d marked %s", p.Version, mark)
}
