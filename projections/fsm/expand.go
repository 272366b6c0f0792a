package fsm

import (
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// expand runs the registered expander of each event of entry, in order,
// replacing the event's payload and keys with the expansion. Each
// expander sees the state before the entry (for a command of a grouped
// entry, after the commands before it). It returns a reason when an
// expander refuses the entry.
func expand(v projections.View, entry *events.Entry) (string, error) {
	for i := range entry.Events {
		ev := &entry.Events[i]
		x, ok := projections.RegisteredExpander(ev.Type)
		if !ok {
			continue
		}
		p, err := events.Decode(ev)
		if err != nil {
			return "", fmt.Errorf("expand %s: %w", ev.Type, err)
		}
		out, reason, err := x(v, entry.Time, p)
		if err != nil {
			return "", fmt.Errorf("expand %s: %w", ev.Type, err)
		}
		if reason != "" {
			return reason, nil
		}
		done, err := events.New(ev.ID, out)
		if err != nil {
			return "", fmt.Errorf("expand %s: %w", ev.Type, err)
		}
		if done.Type != ev.Type {
			return "", fmt.Errorf("expand %s: expander returned a %s", ev.Type, done.Type)
		}
		ev.Version, ev.Keys, ev.Payload = done.Version, done.Keys, done.Payload
	}
	return "", nil
}
