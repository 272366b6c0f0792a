package summary

import (
	"strings"

	"github.com/ordoplane/ordo/events"
)

// Capacity on demand lines: a node request filed for blocked evals.
func init() {
	register("CapacityRequested", func(s *step, p events.Payload) string {
		c := p.(*events.CapacityRequested)
		if s.t.kind == events.KindNodeRequest {
			return "filed by capacity on demand for pool " + c.Pool + " (label " + c.Label + "): " +
				itoa(c.Placements) + " placements blocked, " + itoa(c.Supply) + " on the way, evals " + strings.Join(c.Evals, ", ")
		}
		return "node request " + c.RequestID + " filed for pool " + c.Pool + " (label " + c.Label + ")"
	})
}
