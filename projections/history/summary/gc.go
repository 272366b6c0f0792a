package summary

import "github.com/ordoplane/ordo/events"

func init() {
	register("EvalsPageDeleted", func(s *step, p events.Payload) string {
		if s.t.kind == events.KindEval {
			s.reset()
			return "deleted (eval delete by filter)"
		}
		return plural(len(p.(*events.EvalsPageDeleted).IDs), "eval") + " deleted by filter"
	})
	register("DeploymentsDeleted", func(s *step, p events.Payload) string {
		if s.t.kind == events.KindDeployment {
			s.reset()
			return "garbage collected"
		}
		return plural(len(p.(*events.DeploymentsDeleted).IDs), "deployment") + " garbage collected"
	})
}
