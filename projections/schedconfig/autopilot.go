package schedconfig

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// AutopilotTable holds the autopilot configuration's one row, once an
// operator set one.
const AutopilotTable = "autopilot_config"

// Autopilot is the autopilot configuration set through the log, with the
// indexes of the entries that created and last changed it.
type Autopilot struct {
	events.AutopilotConfig
	CreateIndex uint64
	ModifyIndex uint64
}

// GetAutopilot returns the autopilot configuration set through the log;
// nil when none was ever set (each server keeps its agent file's).
func GetAutopilot(v projections.View) (*Autopilot, error) {
	r, err := v.Get(AutopilotTable, events.AutopilotConfigKey)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var p events.AutopilotConfigUpdated
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return nil, fmt.Errorf("decode autopilot configuration row: %w", err)
	}
	return &Autopilot{AutopilotConfig: p.Config, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}, nil
}
