package schedconfig

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/schedconfig"
)

// Set replaces the scheduler configuration.
type Set struct {
	Config events.SchedulerConfig
	// CAS, when set, applies only if the configuration's modify index is
	// Index (0: never set).
	CAS   bool
	Index uint64
}

var _ commands.Command = Set{}

// Validate implements commands.Command.
func (s Set) Validate() error {
	switch s.Config.Algorithm {
	case "", schedconfig.Binpack, schedconfig.Spread:
		return nil
	}
	return commands.Invalid("SchedulerAlgorithm", "%q is neither %q nor %q", s.Config.Algorithm,
		schedconfig.Binpack, schedconfig.Spread)
}

// Decide implements commands.Command.
func (s Set) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	cfg := s.Config
	if cfg.Algorithm == "" {
		cfg.Algorithm = schedconfig.Binpack
	}
	dec := commands.Decision{Events: []events.Payload{&events.SchedulerConfigUpdated{Config: cfg}}}
	if !s.CAS {
		return dec, nil
	}
	pre := events.Precondition{Table: schedconfig.Table, Key: events.SchedulerConfigKey, Op: events.ModifyIndex, Index: s.Index}
	cur, err := schedconfig.Get(v)
	if err != nil {
		return commands.Decision{}, err
	}
	if cur.ModifyIndex != s.Index {
		return commands.Decision{}, &commands.ConflictError{Precondition: pre,
			Reason: "scheduler configuration changed since the check-and-set index"}
	}
	dec.Preconditions = []events.Precondition{pre}
	return dec, nil
}
