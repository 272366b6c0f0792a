package timetravel

import (
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
)

// Options are the tunables an operator sets (the agent file's time_travel
// block). The zero value keeps every version of every row: each index
// since the log began is a seek away.
type Options struct {
	// DisableVersions keeps no versions store: the server serves no past
	// state, and reads at_index or at_time are refused. By default every
	// version of every projection row is kept in DataDir/versions/
	// (storage/versions), each at the index of the entry that wrote it.
	DisableVersions bool `json:"DisableVersions"`
	// VersionsKept is how many of the newest applied entries the versions
	// store answers for; older versions are pruned (a full pass over the
	// store every VersionsKept/4 entries) and reads below them are refused,
	// naming the oldest index served. 0, the default, keeps every version.
	VersionsKept uint64 `json:"VersionsKept"`
}

// Validate reports Options that cannot work; every value can.
func (o Options) Validate() error { return nil }

// Config configures a TimeTravel.
type Config struct {
	Options
	// DataDir is the server's data directory; required. The versions store
	// lives in DataDir/versions/, a backfill's scratch state in
	// DataDir/timetravel/ (emptied when New starts).
	DataDir string
	// FSM is the live FSM: its commits feed the versions store, its
	// archive is replayed to backfill it, its applied index bounds reads.
	// Required.
	FSM *fsm.FSM
	// Projections are the projections a backfill replays, in the FSM's
	// order (projections/all.Projections()); required.
	Projections []projections.Projection
	// Base, when set, is the state at BaseIndex that the archive's events
	// after it build on (a history file that starts from a saved state):
	// a backfill starts from it rather than from nothing at index 0, and
	// reads before BaseIndex are refused.
	Base      kv.Reader
	BaseIndex uint64
	// Clock times reads for the ordo_timetravel_open_seconds histogram
	// and backfills, and bounds a read's wait for the versions writer;
	// default clock.System{}.
	Clock clock.Clock
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
	case (c.Base == nil) != (c.BaseIndex == 0):
		return errors.New("timetravel: Base and BaseIndex go together")
	}
	return c.Options.Validate()
}
