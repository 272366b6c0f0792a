package schedconfig

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Table holds the scheduler configuration's one row.
const Table = "scheduler_config"

// The scheduling algorithms.
const (
	Binpack = "binpack"
	Spread  = "spread"
)

// Config is the scheduler configuration as readers see it, with the
// indexes of the entries that created and last changed it (0 for
// Default).
type Config struct {
	events.SchedulerConfig
	CreateIndex uint64
	ModifyIndex uint64
}

// Algorithm returns the configured algorithm, Binpack when unset.
func (c *Config) Algorithm() string {
	if c.SchedulerConfig.Algorithm == "" {
		return Binpack
	}
	return c.SchedulerConfig.Algorithm
}

// Default is the configuration of a cluster that never set one: binpack,
// system jobs may preempt (Nomad's defaults), nothing else.
func Default() *Config {
	return &Config{SchedulerConfig: events.SchedulerConfig{Algorithm: Binpack, PreemptSystem: true}}
}

// Projection maintains the scheduler configuration table.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "schedconfig" }

// Version implements projections.Projection.
func (Projection) Version() int { return 2 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table, AutopilotTable} }

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	table, key := Table, events.SchedulerConfigKey
	switch ev.Type {
	case "SchedulerConfigUpdated":
	case "AutopilotConfigUpdated":
		table, key = AutopilotTable, events.AutopilotConfigKey
	default:
		return nil
	}
	raw, err := events.Upcast(ev)
	if err != nil {
		return err
	}
	return tx.Put(table, key, raw)
}

// Get returns the scheduler configuration, Default when none was set.
func Get(v projections.View) (*Config, error) {
	r, err := v.Get(Table, events.SchedulerConfigKey)
	if errors.Is(err, projections.ErrNotFound) {
		return Default(), nil
	} else if err != nil {
		return nil, err
	}
	var p events.SchedulerConfigUpdated
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return nil, fmt.Errorf("decode scheduler configuration row: %w", err)
	}
	return &Config{SchedulerConfig: p.Config, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}, nil
}
