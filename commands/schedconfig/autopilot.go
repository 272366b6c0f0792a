package schedconfig

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// SetAutopilot replaces the autopilot settings an operator may change at
// run time. They go through the log, so every server holds them and a
// new leader keeps them.
type SetAutopilot struct {
	Config events.AutopilotConfig
}

var _ commands.Command = SetAutopilot{}

// Validate implements commands.Command.
func (s SetAutopilot) Validate() error {
	if s.Config.LastContactThreshold < 0 {
		return commands.Invalid("LastContactThreshold", "must not be negative")
	}
	if s.Config.ServerStabilizationTime < 0 {
		return commands.Invalid("ServerStabilizationTime", "must not be negative")
	}
	return nil
}

// Decide implements commands.Command.
func (s SetAutopilot) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: []events.Payload{&events.AutopilotConfigUpdated{Config: s.Config}}}, nil
}
