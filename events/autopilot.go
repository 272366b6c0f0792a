package events

import "time"

// AutopilotConfig is the autopilot settings an operator may change at run
// time (PUT /v1/operator/autopilot/configuration): they replace, on every
// server, those its agent file started it with. Zero durations and
// MaxTrailingLogs mean the defaults.
type AutopilotConfig struct {
	CleanupDeadServers      bool          `msgpack:"cds,omitempty" json:"CleanupDeadServers"`
	LastContactThreshold    time.Duration `msgpack:"lct,omitempty" json:"LastContactThreshold"`
	MaxTrailingLogs         uint64        `msgpack:"mtl,omitempty" json:"MaxTrailingLogs"`
	MinQuorum               uint          `msgpack:"mq,omitempty" json:"MinQuorum"`
	ServerStabilizationTime time.Duration `msgpack:"sst,omitempty" json:"ServerStabilizationTime"`
}

// KindAutopilotConfig is the entity kind of the autopilot configuration,
// a single entity whose key is AutopilotConfigKey.
const KindAutopilotConfig = "autopilot"

// AutopilotConfigKey is the autopilot configuration's entity key.
const AutopilotConfigKey = "autopilot"

// AutopilotConfigUpdated records the autopilot configuration replaced.
type AutopilotConfigUpdated struct {
	Config AutopilotConfig `msgpack:"cfg" json:"AutopilotConfig"`
}

// EntityKeys implements Payload.
func (p *AutopilotConfigUpdated) EntityKeys() []Key {
	return []Key{{Kind: KindAutopilotConfig, Value: AutopilotConfigKey}}
}

func init() {
	Register(Type{Name: "AutopilotConfigUpdated", Version: 1, Topic: "Operator",
		New: func() Payload { return new(AutopilotConfigUpdated) }})
}
