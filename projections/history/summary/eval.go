package summary

import (
	"fmt"

	"github.com/ordoplane/ordo/events"
)

func init() {
	register("EvalsUpserted", func(s *step, p events.Payload) string { return evalsUpserted(s, p.(*events.EvalsUpserted)) })
	register("EvalsDeleted", func(s *step, p events.Payload) string { return evalsDeleted(s, p.(*events.EvalsDeleted)) })
}

func evalsUpserted(s *step, p *events.EvalsUpserted) string {
	if s.t.kind == events.KindEval {
		for i := range p.Evals {
			if e := &p.Evals[i]; e.ID == s.t.id {
				return evalUpserted(s, e)
			}
		}
		return "evals updated (the eval is not among them)"
	}
	items := make([]string, 0, len(p.Evals))
	for _, e := range p.Evals {
		if s.t.kind == events.KindJob && !s.jobMatches(e.Namespace, e.JobID) {
			continue
		}
		item := fmt.Sprintf("eval %s %s (%s)", e.ID, e.Status, e.TriggeredBy)
		if s.t.kind != events.KindJob {
			item = fmt.Sprintf("eval %s for job %s %s (%s)", e.ID, e.JobID, e.Status, e.TriggeredBy)
		}
		items = append(items, item)
	}
	if len(items) == 1 {
		return items[0]
	}
	return fmt.Sprintf("%s: %s", plural(len(items), "eval"), list(items, 3))
}

func evalUpserted(s *step, e *events.Evaluation) string {
	created := !s.known()
	status := s.set("Status", e.Status)
	s.set("StatusDescription", e.StatusDescription)
	s.set("TriggeredBy", e.TriggeredBy)
	s.set("JobID", e.JobID)
	s.set("NodeID", e.NodeID)
	s.set("DeploymentID", e.DeploymentID)
	blocked := s.set("BlockedEval", e.BlockedEval)
	next := s.set("NextEval", e.NextEval)
	s.set("PreviousEval", e.PreviousEval)
	wait := s.set("WaitUntil", leaderTime(e.WaitUntil))
	queued := map[string]string{}
	for tg, n := range e.QueuedAllocations {
		queued[tg] = itoa(n)
	}
	queuedChanges := s.setFamily("QueuedAllocations[", "]", queued)
	failed := map[string]string{}
	for tg, m := range e.FailedTGAllocs {
		if m != nil {
			failed[tg] = fmt.Sprintf("%d evaluated, %d filtered, %d exhausted", m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted)
		}
	}
	failedChanges := s.setFamily("FailedTGAllocs[", "]", failed)

	if created {
		line := fmt.Sprintf("created: %s for job %s, status %s", e.TriggeredBy, e.JobID, e.Status)
		if e.NodeID != "" {
			line += ", node " + e.NodeID
		}
		if e.DeploymentID != "" {
			line += ", deployment " + e.DeploymentID
		}
		if e.PreviousEval != "" {
			line += ", follows eval " + e.PreviousEval
		}
		if e.WaitUntil != 0 {
			line += ", waits until " + leaderTime(e.WaitUntil)
		}
		return line + paren(e.StatusDescription)
	}
	var parts []string
	if status != nil {
		parts = append(parts, "status "+arrow(status)+paren(e.StatusDescription))
	}
	if blocked != nil && blocked.New != "" {
		parts = append(parts, "blocked eval "+blocked.New+" created")
	}
	if next != nil && next.New != "" {
		parts = append(parts, "next eval "+next.New)
	}
	if wait != nil && wait.New != "" {
		parts = append(parts, "waits until "+wait.New)
	}
	for _, c := range queuedChanges {
		parts = append(parts, trans("queued "+c.Field[len("QueuedAllocations["):len(c.Field)-1], c))
	}
	for _, c := range failedChanges {
		if c.New != "" {
			parts = append(parts, "placement failed for "+c.Field[len("FailedTGAllocs["):len(c.Field)-1]+" ("+c.New+")")
		}
	}
	if line := join(parts...); line != "" {
		return line
	}
	return "updated, status " + e.Status
}

func evalsDeleted(s *step, p *events.EvalsDeleted) string {
	if s.t.kind == events.KindEval {
		s.reset()
		return "garbage collected"
	}
	return plural(len(p.IDs), "eval") + " garbage collected"
}
