package summary

import "github.com/ordoplane/ordo/events"

// Root key lines give a key's state and times; key material is never in
// an event, and a summary shows nothing of the public key either.
func init() {
	register("RootKeyUpserted", func(s *step, p events.Payload) string {
		k := p.(*events.RootKeyUpserted).Key
		created := !s.known()
		state := s.set("State", k.State)
		if created {
			return "root key " + k.KeyID + " created (" + k.Algorithm + ", " + k.State + ")"
		}
		if state != nil {
			return "root key " + trans("state", state)
		}
		return "root key re-recorded unchanged"
	})
	register("RootKeyDeleted", func(s *step, p events.Payload) string {
		s.reset()
		return "root key " + p.(*events.RootKeyDeleted).KeyID + " deleted"
	})
}
