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
//
// A read at index i the versions store covers (DisableVersions) is a seek
// per key. Any other read replays the archive from the newest checkpoint
// at or below i, through every projection: about 100 µs of CPU per event of a
// scheduling history on the 2-core development VM (docs/history.md has the
// figures). So the spacing of the checkpoints is what bounds a read's
// time. Taking one costs a memtable flush and hard links (about 0.1 s);
// keeping one costs the disk space of the tables it alone still links.
// Two tiers keep recent history dense and older history reachable: the
// CheckpointsKept newest (CheckpointEvery apart), then up to
// SparseCheckpointsKept older ones, CheckpointEvery×CheckpointsKept apart.
type Options struct {
	// CheckpointEvery is how many applied entries (raft indexes) separate
	// two checkpoints; default 10,000.
	CheckpointEvery uint64 `json:"CheckpointEvery"`
	// CheckpointMinInterval is the least time between two checkpoints, so
	// a burst of writes does not take one every moment; default 10s.
	CheckpointMinInterval time.Duration `json:"CheckpointMinInterval"`
	// CheckpointsKept is how many of the newest checkpoints are kept;
	// default 10.
	CheckpointsKept int `json:"CheckpointsKept"`
	// SparseCheckpointsKept is how many older checkpoints are kept below
	// the newest, at least CheckpointEvery×CheckpointsKept entries apart;
	// default 10. Negative keeps none. Reads older than the oldest kept
	// checkpoint replay the archive from its start.
	SparseCheckpointsKept int `json:"SparseCheckpointsKept"`
	// CacheSize is how many materialised states stay open for later reads,
	// least recently used evicted first; default 4. Each is a Pebble store
	// in the scratch directory with a 32 MiB block cache.
	CacheSize int `json:"CacheSize"`
	// DisableCheckpoints takes no checkpoints: reads replay from the newest
	// checkpoint already on disk, or from the archive's start. It disables
	// the redo log too.
	DisableCheckpoints bool `json:"DisableCheckpoints"`
	// DisableRedo keeps no redo log: every read replays events from its
	// checkpoint. By default the FSM's committed batches since the oldest
	// dense checkpoint are kept in DataDir/redo/, and a read in the dense
	// tier applies them to its checkpoint instead of re-running the
	// projections (tens of times faster); the disk they take is about what
	// the FSM wrote over the dense tier.
	DisableRedo bool `json:"DisableRedo"`
	// DisableVersions keeps no versions store. By default every version of
	// every projection row is kept in DataDir/versions/ (storage/versions),
	// each at the index of the entry that wrote it, from the first start
	// with it on: a read at any index since then is a seek per key, with no
	// checkpoint copied and nothing replayed, at the disk cost of every row
	// version written. Reads before its first index, or in a gap (a
	// restore, a rebuild's switch, a writer fallen behind, until the next
	// batch re-seeds it), use the checkpoints. With versions kept, no redo
	// log is kept (DisableRedo matters only with DisableVersions).
	DisableVersions bool `json:"DisableVersions"`
	// VersionsKept is how many of the newest applied entries the versions
	// store answers for; versions older than that are pruned (a full pass
	// over the store every VersionsKept/4 entries) and reads below them use
	// the checkpoints. 0, the default, keeps every version: the whole
	// history since the store began stays a seek away.
	VersionsKept uint64 `json:"VersionsKept"`
}

// DefaultOptions returns the default Options.
func DefaultOptions() Options {
	return Options{CheckpointEvery: 10_000, CheckpointMinInterval: 10 * time.Second, CheckpointsKept: 10,
		SparseCheckpointsKept: 10, CacheSize: 4}
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
	switch {
	case o.SparseCheckpointsKept == 0:
		o.SparseCheckpointsKept = d.SparseCheckpointsKept
	case o.SparseCheckpointsKept < 0:
		o.SparseCheckpointsKept = 0
	}
	if o.CacheSize == 0 {
		o.CacheSize = d.CacheSize
	}
}

// sparseGap is the least spacing of the sparse checkpoints.
func (o Options) sparseGap() uint64 { return o.CheckpointEvery * uint64(o.CheckpointsKept) }

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
