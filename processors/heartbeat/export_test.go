package heartbeat

import "github.com/ordoplane/ordo/commands"

// MissedNode returns the node a command of the monitor is about, "" when c
// is not one.
func MissedNode(c commands.Command) string {
	if m, ok := c.(*miss); ok {
		return m.id
	}
	return ""
}
