package rerun

import (
	"fmt"

	"github.com/ordoplane/ordo/events"
)

// TriggerLines says, one line per allocation, what the entry that created
// an eval changed with it (Record.Trigger): the node drainer marking an
// allocation for migration, an operator stopping one. These changes caused
// the eval; they are not an attempt of its plan, which the plan applier
// never saw. A nil commit has no lines.
func TriggerLines(c *Commit) []string {
	if c == nil {
		return nil
	}
	lines := make([]string, 0, len(c.Updates))
	for _, u := range c.Updates {
		lines = append(lines, fmt.Sprintf("allocation %s %s", u.ID, triggerText(u)))
	}
	return lines
}

// triggerText says what one update of a triggering entry did.
func triggerText(u events.AllocDesiredUpdate) string {
	t := u.DesiredTransition
	var s string
	switch {
	case isSet(t.Migrate):
		s = "marked for migration by the node drainer"
	case u.DesiredStatus == events.AllocDesiredStop || u.DesiredStatus == events.AllocDesiredEvict:
		s = "stopped"
		if u.DesiredDescription != "" {
			s += " (" + u.DesiredDescription + ")"
		}
	case isSet(t.Reschedule) || isSet(t.ForceReschedule):
		s = "marked to be rescheduled"
	default:
		s = "updated"
	}
	if isSet(t.NoShutdownDelay) {
		s += ", without its shutdown delay"
	}
	return s
}

func isSet(b *bool) bool { return b != nil && *b }
