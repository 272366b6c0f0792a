package summary

import (
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
)

func init() {
	register("NodePoolUpserted", func(s *step, p events.Payload) string {
		pool := &p.(*events.NodePoolUpserted).Pool
		if s.t.kind != events.KindNodePool {
			return "node pool " + pool.Name + " applied"
		}
		if pool.Description != "" {
			return "applied: " + pool.Description
		}
		return "applied"
	})
	register("NodePoolDeleted", func(s *step, p events.Payload) string {
		name := p.(*events.NodePoolDeleted).Name
		if s.t.kind != events.KindNodePool {
			return "node pool " + name + " deleted"
		}
		s.reset()
		return "deleted"
	})
	register("SchedulerConfigUpdated", func(_ *step, p events.Payload) string {
		return schedulerConfigUpdated(&p.(*events.SchedulerConfigUpdated).Config)
	})
	register("AutopilotConfigUpdated", func(_ *step, p events.Payload) string {
		return autopilotConfigUpdated(&p.(*events.AutopilotConfigUpdated).Config)
	})
}

// autopilotConfigUpdated names the settings an operator gave (zero ones
// take the defaults and are not named).
func autopilotConfigUpdated(c *events.AutopilotConfig) string {
	set := []string{fmt.Sprintf("cleanup of dead servers %t", c.CleanupDeadServers)}
	if c.LastContactThreshold > 0 {
		set = append(set, "last contact threshold "+c.LastContactThreshold.String())
	}
	if c.MaxTrailingLogs > 0 {
		set = append(set, fmt.Sprintf("max trailing logs %d", c.MaxTrailingLogs))
	}
	if c.MinQuorum > 0 {
		set = append(set, fmt.Sprintf("min quorum %d", c.MinQuorum))
	}
	if c.ServerStabilizationTime > 0 {
		set = append(set, "server stabilization time "+c.ServerStabilizationTime.String())
	}
	return "autopilot configuration set: " + strings.Join(set, ", ")
}

// schedulerConfigUpdated names the algorithm and the switches turned on.
func schedulerConfigUpdated(c *events.SchedulerConfig) string {
	alg := c.Algorithm
	if alg == "" {
		alg = "binpack"
	}
	on := []string{"algorithm " + alg}
	for _, f := range []struct {
		set  bool
		name string
	}{
		{c.RejectJobRegistration, "job registration rejected"},
		{c.PauseEvalBroker, "eval broker paused"},
		{c.MemoryOversubscription, "memory oversubscription"},
	} {
		if f.set {
			on = append(on, f.name)
		}
	}
	return "scheduler configuration set: " + strings.Join(on, ", ")
}
