package timetravel

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/projections"
)

// Options are the tunables an operator sets. The zero value of a field
// takes its default.
type Options struct {
	// CheckpointEvery is how many applied entries (raft indexes) separate
	// two checkpoints; default 100,000. A read at index i replays at most
	// this many entries past the newest checkpoint at or below i.
	CheckpointEvery uint64 `json:"CheckpointEvery"`
	// CheckpointMinInterval is the least time between two checkpoints, so
	// a burst of writes does not take one every few seconds; default 1m.
	CheckpointMinInterval time.Duration `json:"CheckpointMinInterval"`
	// CheckpointsKept is how many of the newest checkpoints are kept; older
	// ones are removed. Default 5. Reads older than the oldest kept
	// checkpoint replay the archive from its start.
	CheckpointsKept int `json:"CheckpointsKept"`
	// CacheSize is how many materialised states stay open for later reads,
	// least recently used evicted first; default 4. Each is a Pebble store
	// in the scratch directory with an 8 MiB block cache.
	CacheSize int `json:"CacheSize"`
	// DisableCheckpoints takes no checkpoints: reads replay from the newest
	// checkpoint already on disk, or from the archive's start.
	DisableCheckpoints bool `json:"DisableCheckpoints"`
}

// DefaultOptions returns the default Options.
func DefaultOptions() Options {
	return Options{CheckpointEvery: 100_000, CheckpointMinInterval: time.Minute, CheckpointsKept: 5, CacheSize: 4}
}

func (o *Options) defaults() {
	d := DefaultOptions()
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = d.CheckpointEvery
	}
	if o.CheckpointMinInterval == 0 {
		o.CheckpointMinInterval = d.CheckpointMinInterval
	}
	if o.CheckpointsKept == 0 {
		o.CheckpointsKept = d.CheckpointsKept
	}
	if o.CacheSize == 0 {
		o.CacheSize = d.CacheSize
	}
}

// Validate reports Options that cannot work.
func (o Options) Validate() error {
	switch {
	case o.CheckpointMinInterval < 0:
		return fmt.Errorf("timetravel: CheckpointMinInterval %v is negative", o.CheckpointMinInterval)
	case o.CheckpointsKept < 0:
		return fmt.Errorf("timetravel: CheckpointsKept %d is negative", o.CheckpointsKept)
	case o.CacheSize < 0:
		return fmt.Errorf("timetravel: CacheSize %d is negative", o.CacheSize)
	}
	return nil
}

// Config configures a TimeTravel.
type Config struct {
	Options
	// DataDir is the server's data directory; required. Checkpoints live
	// in DataDir/checkpoints/<applied index>/, materialised states in
	// DataDir/timetravel/ (emptied when New starts).
	DataDir string
	// FSM is the live FSM: its state store is checkpointed and its archive
	// replayed; its applied index bounds reads. Required.
	FSM *projections.FSM
	// Projections are the projections to materialise, in the FSM's order
	// (projections/all.Projections()); required.
	Projections []projections.Projection
	// Clock spaces checkpoints by CheckpointMinInterval; default time.Now.
	Clock func() time.Time
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("timetravel: DataDir is required")
	case c.FSM == nil:
		return errors.New("timetravel: FSM is required")
	case len(c.Projections) == 0:
		return errors.New("timetravel: Projections are required")
	}
	return c.Options.Validate()
}
