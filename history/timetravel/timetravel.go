package timetravel

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/versions"
)

// TimeTravel answers reads at past indexes from the versions store, which
// the FSM's commits keep up to date and a backfill from the archive
// extends back to the log's first index.
type TimeTravel struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	// versions holds every version of the projection rows; nil when
	// disabled.
	versions *versionKeeper
	once     sync.Once
	closed   chan struct{}
	// runMu orders Run's start against Close; runs joins the Runs, which
	// Close waits for before it closes the store.
	runMu sync.Mutex
	runs  sync.WaitGroup
}

// New opens the versions store (unless disabled), seeds it from the live
// state when it does not end there, and hooks it to the FSM's commits.
// Run backfills what it does not cover. It removes DataDir/checkpoints
// and DataDir/redo, which earlier versions kept and nothing reads now.
func New(cfg Config) (*TimeTravel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	t := &TimeTravel{cfg: cfg, log: cfg.Logger, closed: make(chan struct{})}
	scratch := filepath.Join(cfg.DataDir, "timetravel")
	// What a crashed backfill left, and the checkpoints and redo log
	// earlier versions read past states from.
	for _, dir := range []string{scratch, filepath.Join(cfg.DataDir, "checkpoints"), filepath.Join(cfg.DataDir, "redo")} {
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("timetravel: clean %s: %w", dir, err)
		}
	}
	t.metrics = newMetrics(cfg.Registerer, t)
	if cfg.DisableVersions {
		return t, nil
	}
	var err error
	if t.versions, err = openVersions(versions.Dir(cfg.DataDir), scratch, cfg, t.metrics); err != nil {
		t.metrics.unregister()
		return nil, err
	}
	cfg.FSM.SetCommitHook(t.committed)
	return t, nil
}

// CommitHook returns the hook New set on the FSM (nil when it set none),
// for a caller sharing the FSM's one hook between several TimeTravels.
func (t *TimeTravel) CommitHook() fsm.CommitHook {
	if t.versions == nil {
		return nil
	}
	return t.committed
}

// committed is the FSM's commit hook: it feeds the versions store.
func (t *TimeTravel) committed(c fsm.Commit) { t.versions.committed(c) }

// Name implements the processor interface.
func (t *TimeTravel) Name() string { return "timetravel" }

// Run backfills the versions store until ctx ends: whatever it does not
// cover between the history's first index and its newest span (all of it
// on a server that already had history when the store was created, a gap
// a crash or a dropped batch left) is rebuilt by a replay of the archive
// through the projections, one range at a time, with progress in Status
// and the ordo_timetravel_backfill_* metrics. It returns nil when ctx
// ends or Close is called.
func (t *TimeTravel) Run(ctx context.Context) error {
	if t.versions == nil {
		return nil
	}
	t.runMu.Lock()
	select {
	case <-t.closed:
		t.runMu.Unlock()
		return nil
	default:
	}
	t.runs.Add(1)
	t.runMu.Unlock()
	defer t.runs.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-t.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return t.versions.backfill(ctx)
}

// WaitBackfilled waits until the versions store covers every index it
// serves (from the history's first index, or the oldest VersionsKept
// keeps, to what the writer has reached), with no backfill under way, or
// until ctx ends. Run must be running for it to end.
func (t *TimeTravel) WaitBackfilled(ctx context.Context) error {
	k := t.versions
	if k == nil {
		return nil
	}
	for {
		k.mu.Lock()
		changed := k.mu.wrote
		k.mu.Unlock()
		if k.complete() {
			return nil
		}
		select {
		case <-changed:
		case <-t.closed:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close detaches the versions store from the FSM, writes what is queued
// and closes it; a backfill under way stops (and is done again by the
// next Run). Reads after Close fail with ErrClosed. Close the TimeTravel
// before the live store.
func (t *TimeTravel) Close() {
	t.once.Do(func() {
		t.runMu.Lock()
		close(t.closed)
		t.runMu.Unlock()
		t.runs.Wait() // the backfill stops: its context ends with closed
		if t.versions != nil {
			t.cfg.FSM.SetCommitHook(nil)
			if err := t.versions.close(); err != nil {
				t.log.Warn("close versions store", "err", err)
			}
		}
		t.metrics.unregister()
	})
}

// VersionsBytes returns the disk space of the versions store (0 when it is
// not kept).
func (t *TimeTravel) VersionsBytes() int64 {
	if t.versions == nil {
		return 0
	}
	return t.versions.store.Bytes()
}

// VersionsLag returns how many applied indexes the versions store does not
// hold yet (0 when it is not kept).
func (t *TimeTravel) VersionsLag() uint64 {
	if t.versions == nil {
		return 0
	}
	return t.versions.lag(t.cfg.FSM.Applied())
}

// VersionSpans returns the spans of indexes the versions store answers
// (none when it is not kept).
func (t *TimeTravel) VersionSpans() []versions.Span {
	if t.versions == nil {
		return nil
	}
	return t.versions.store.Spans()
}

// State is the projections at one index, open for reading until Release.
type State struct {
	// Index is the applied index the state is at.
	Index  uint64
	reader *appliedAt
}

// View returns a view of the projections at Index.
func (s *State) View() projections.View { return projections.NewView(s.reader) }

// Release lets the state go. Release is idempotent.
func (s *State) Release() {}

// At returns the projections as they stood once index was applied, read
// from the versions store: a seek per key, nothing built or replayed.
// index must be between 1 and the applied index (else ErrBeyondApplied);
// an index the store does not serve is a *NotServedError (Retryable while
// a backfill is to reach it). The returned state reports AppliedIndex =
// index; nothing is appended anywhere.
func (t *TimeTravel) At(ctx context.Context, index uint64) (*State, error) {
	select {
	case <-t.closed:
		return nil, ErrClosed
	default:
	}
	if applied := t.cfg.FSM.Applied(); index == 0 || index > applied {
		return nil, fmt.Errorf("%w: %d is not in [1, %d]", ErrBeyondApplied, index, applied)
	}
	if t.versions == nil {
		return nil, &NotServedError{Index: index, Reason: "this server keeps no versions (time_travel.disable_versions)"}
	}
	start := t.cfg.Clock.Now()
	r, err := t.versions.reader(ctx, index)
	if err != nil {
		return nil, err
	}
	t.metrics.versionsReads.Inc()
	t.metrics.readSeconds.Observe(t.cfg.Clock.Now().Sub(start).Seconds())
	return &State{Index: index, reader: r}, nil
}

// View is At for the HTTP API (httpapi.History): the view of the state at
// index and the function releasing it. The versions store holds every
// projection, so a read never strays outside its ReadSet.
func (t *TimeTravel) View(ctx context.Context, index uint64) (projections.View, func(), error) {
	s, err := t.At(ctx, index)
	if err != nil {
		return projections.View{}, nil, err
	}
	return s.View(), s.Release, nil
}
