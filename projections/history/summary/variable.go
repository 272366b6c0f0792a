package summary

import (
	"strconv"

	"github.com/ordoplane/ordo/events"
)

// Variable lines name the path and the key id, never an item: the
// payload holds only ciphertext, and a summary shows none of it.
func init() {
	registerSensitive("VariableUpserted", func(s *step, p events.Payload) string {
		v := p.(*events.VariableUpserted)
		if s.t.kind != events.KindVariable {
			return "variable " + v.Path + " written (" + strconv.FormatInt(v.Size(), 10) + " encrypted bytes)"
		}
		created := !s.known()
		key := s.set("KeyID", v.KeyID)
		if created {
			return "created (key " + v.KeyID + ")"
		}
		if key != nil {
			return "updated, " + trans("key", key)
		}
		return "updated"
	})
	register("VariableDeleted", func(s *step, p events.Payload) string {
		v := p.(*events.VariableDeleted)
		if s.t.kind != events.KindVariable {
			return "variable " + v.Path + " deleted"
		}
		s.reset()
		return "deleted"
	})
}
