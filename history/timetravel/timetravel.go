package timetravel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/versions"
)

// ErrBeyondApplied is returned for an index this server has not applied.
var ErrBeyondApplied = errors.New("ordo: index is beyond the applied index")

// scratchCacheBytes is the block cache of each materialised store.
const scratchCacheBytes = 32 << 20

// TimeTravel takes checkpoints of a live state store and materialises the
// projections at any applied index from the nearest one.
type TimeTravel struct {
	cfg     Config
	log     *slog.Logger
	cps     *checkpoints
	cache   *cache
	scratch string
	metrics *metrics
	seq     atomic.Uint64 // names scratch and temporary directories
	// redo holds the FSM's committed batches since the oldest dense
	// checkpoint; nil when disabled.
	redo *redoKeeper
	// versions holds every version of the projection rows since it was
	// seeded; nil when disabled.
	versions *versionKeeper
	// takeMu serialises checkpoints.
	takeMu sync.Mutex
	// ctx cancels materialisations in flight at Close.
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

// New opens the checkpoint directory (removing any half-written
// checkpoint) and empties the scratch directory, which a crash may have
// left full.
func New(cfg Config) (*TimeTravel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Options.defaults()
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	t := &TimeTravel{cfg: cfg, log: cfg.Logger, scratch: filepath.Join(cfg.DataDir, "timetravel")}
	var err error
	if t.cps, err = openCheckpoints(filepath.Join(cfg.DataDir, "checkpoints")); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(t.scratch); err != nil {
		return nil, fmt.Errorf("timetravel: clean scratch dir: %w", err)
	}
	if err := os.MkdirAll(t.scratch, 0o755); err != nil {
		return nil, fmt.Errorf("timetravel: scratch dir: %w", err)
	}
	t.cache = newCache(cfg.CacheSize)
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.metrics = newMetrics(cfg.Registerer, t)
	t.metrics.lastIndex.Set(float64(t.cps.newest()))
	if !cfg.DisableVersions {
		if t.versions, err = openVersions(versions.Dir(cfg.DataDir), cfg.FSM, cfg.VersionsKept, t.metrics, t.log); err != nil {
			t.metrics.unregister()
			return nil, err
		}
	} else if !cfg.DisableCheckpoints && !cfg.DisableRedo {
		if t.redo, err = openRedo(redoDir(cfg.DataDir), cfg.FSM, t.metrics); err != nil {
			t.metrics.unregister()
			return nil, err
		}
	}
	if t.redo != nil || t.versions != nil {
		cfg.FSM.SetCommitHook(t.committed)
	}
	return t, nil
}

// CommitHook returns the hook New set on the FSM (nil when it set none),
// for a caller sharing the FSM's one hook between several TimeTravels.
func (t *TimeTravel) CommitHook() projections.CommitHook {
	if t.redo == nil && t.versions == nil {
		return nil
	}
	return t.committed
}

// committed is the FSM's commit hook: it feeds the redo log and the
// versions store.
func (t *TimeTravel) committed(c projections.Commit) {
	if t.redo != nil {
		t.redo.committed(c)
	}
	if t.versions != nil {
		t.versions.committed(c)
	}
}

// Name implements the processor interface.
func (t *TimeTravel) Name() string { return "timetravel" }

// Close stops materialisations in flight, waits for them, and closes every
// cached state no reader holds; held ones close when released. Reads
// after Close fail with ErrClosed. Close the TimeTravel before the live
// store.
func (t *TimeTravel) Close() {
	t.once.Do(func() {
		t.cancel()
		t.cache.close()
		t.cache.building.Wait()
		if t.redo != nil || t.versions != nil {
			t.cfg.FSM.SetCommitHook(nil)
		}
		if t.redo != nil {
			if err := t.redo.close(); err != nil {
				t.log.Warn("close redo log", "err", err)
			}
		}
		if t.versions != nil {
			if err := t.versions.close(); err != nil {
				t.log.Warn("close versions store", "err", err)
			}
		}
		t.metrics.unregister()
	})
}

// Checkpoints returns the applied indexes of the kept checkpoints, ascending.
func (t *TimeTravel) Checkpoints() []uint64 { return t.cps.list() }

// CheckpointBytes returns the disk space the kept checkpoints hold, each
// file once (tables still shared with the live store included).
func (t *TimeTravel) CheckpointBytes() int64 { return t.cps.bytes() }

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

// RedoBytes returns the disk space of the redo log (0 when it is not kept).
func (t *TimeTravel) RedoBytes() int64 {
	if t.redo == nil {
		return 0
	}
	return t.redo.log.Bytes()
}

// Cached returns the indexes of the cached states, most recently used first.
func (t *TimeTravel) Cached() []uint64 { return t.cache.indexes() }

// State is the projections at one index, open for reading until Release.
type State struct {
	// Index is the applied index the state is at.
	Index   uint64
	reader  *guard
	release func()
}

// View returns a view of the projections at Index. It, and rows read
// through it, are valid until Release.
func (s *State) View() projections.View { return projections.NewView(s.reader) }

// Strayed reports whether a read through View asked for a table of a
// projection the state does not hold (see At): that read found nothing,
// and whatever was computed from it must be read again from a state of
// every projection.
func (s *State) Strayed() bool { return s.reader.strayed.Load() }

// Release lets the state go; it may be closed at once if it was evicted.
// Release is idempotent.
func (s *State) Release() { s.release() }

// At returns the projections as they stood once index was applied:
// the newest checkpoint at or below index, copied into a scratch store
// and brought forward through the archive's events up to index (or the
// cached result of an earlier read). index must be between 1 and the
// applied index. The returned state reports AppliedIndex = index and is
// never written again; nothing is appended anywhere.
//
// With tables, only the projections that own them are brought forward,
// which costs a fraction of every projection's replay (a node list needs
// the nodes projection only); a state of every projection at index, if
// cached, serves as well. Reading a table of another projection through
// the state finds nothing and marks it Strayed. A table no projection
// owns brings every projection forward.
func (t *TimeTravel) At(ctx context.Context, index uint64, tables ...string) (*State, error) {
	if applied := t.cfg.FSM.Applied(); index == 0 || index > applied {
		return nil, fmt.Errorf("%w: %d is not in [1, %d]", ErrBeyondApplied, index, applied)
	}
	start := t.cfg.Clock()
	// What this server kept from before an operator restore describes a
	// replaced history: only what it kept since serves.
	floor := t.cfg.FSM.RestoredAt()
	if t.versions != nil {
		if r, ok := t.versions.reader(ctx, index, floor); ok {
			t.metrics.versionsReads.Inc()
			t.metrics.readSeconds.Observe(t.cfg.Clock().Sub(start).Seconds())
			return &State{Index: index, reader: &guard{r: r}, release: func() {}}, nil
		}
	}
	projs, set := t.owners(tables)
	key := stateKey{index: index, set: set, floor: floor}
	if set != "" && (t.cache.has(stateKey{index: index, floor: floor}) || t.redoReaches(index, floor)) {
		projs, key = t.cfg.Projections, stateKey{index: index, floor: floor}
	}
	m, release, err := t.cache.get(ctx, key, func() (*kv.Store, string, error) { return t.materialise(index, floor, projs) })
	if err != nil {
		return nil, err
	}
	t.metrics.readSeconds.Observe(t.cfg.Clock().Sub(start).Seconds())
	g := &guard{r: m.store}
	if key.set != "" {
		g.tables = map[string]bool{}
		for _, p := range projs {
			for _, tb := range p.Tables() {
				g.tables[tb] = true
			}
		}
	}
	return &State{Index: index, reader: g, release: release}, nil
}

// owners returns the projections owning tables and the name of that set,
// or every projection and "" when tables is empty, names a table no
// projection owns, or is owned by every projection.
func (t *TimeTravel) owners(tables []string) ([]projections.Projection, string) {
	if len(tables) == 0 {
		return t.cfg.Projections, ""
	}
	want := map[string]bool{}
	for _, tb := range tables {
		want[tb] = true
	}
	var projs []projections.Projection
	var names []string
	for _, p := range t.cfg.Projections {
		for _, tb := range p.Tables() {
			if want[tb] {
				delete(want, tb)
				if len(names) == 0 || names[len(names)-1] != p.Name() {
					projs, names = append(projs, p), append(names, p.Name())
				}
			}
		}
	}
	if len(want) > 0 || len(projs) == len(t.cfg.Projections) {
		return t.cfg.Projections, ""
	}
	return projs, strings.Join(names, ",")
}

// View is At for the HTTP API (httpapi.History): the view of the state at
// index and the function releasing it. When ctx carries a
// projections.ReadSet, only the projections owning its tables are brought
// forward, and a read that strays outside them calls its Stray on
// release.
func (t *TimeTravel) View(ctx context.Context, index uint64) (projections.View, func(), error) {
	rs := projections.ReadSetFrom(ctx)
	var tables []string
	if rs != nil {
		tables = rs.Tables
	}
	s, err := t.At(ctx, index, tables...)
	if err != nil {
		return projections.View{}, nil, err
	}
	return s.View(), func() {
		if rs != nil && s.Strayed() {
			t.metrics.strays.Inc()
			rs.Stray()
		}
		s.Release()
	}, nil
}

// guard reads a materialised state, refusing (and remembering) reads of
// tables it does not hold: with tables nil, it holds every one.
type guard struct {
	r       kv.Reader
	tables  map[string]bool
	strayed atomic.Bool
}

var _ kv.Reader = (*guard)(nil)

func (g *guard) holds(key []byte) bool {
	if g.tables == nil {
		return true
	}
	if tb, ok := projections.KeyTable(key); ok && !g.tables[tb] {
		g.strayed.Store(true)
		return false
	}
	return true
}

func (g *guard) Get(key []byte) ([]byte, error) {
	if !g.holds(key) {
		return nil, kv.ErrNotFound
	}
	return g.r.Get(key)
}

func (g *guard) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	if !g.holds(lower) {
		return nil
	}
	return g.r.Scan(lower, upper, reverse, fn)
}

// materialise builds the state of projs at index in a new scratch
// directory, which it removes on failure, from a checkpoint taken at or
// after floor (or from nothing).
func (t *TimeTravel) materialise(index, floor uint64, projs []projections.Projection) (*kv.Store, string, error) {
	if t.ctx.Err() != nil {
		return nil, "", ErrClosed
	}
	t.metrics.materialisations.Inc()
	dir := filepath.Join(t.scratch, strconv.FormatUint(index, 10)+"-"+strconv.FormatUint(t.seq.Add(1), 10))
	from, err := t.copyBase(index, floor, dir)
	if err != nil {
		return nil, "", fmt.Errorf("materialise index %d: %w", index, err)
	}
	store, err := t.replay(dir, from, floor, index, projs)
	if errors.Is(err, projections.ErrRebuildNeeded) && from > 0 {
		// A checkpoint written by other versions of the projections:
		// replay from the start instead.
		t.log.Warn("checkpoint holds other projection versions; replaying from the start", "checkpoint", from, "err", err)
		if err = os.RemoveAll(dir); err == nil {
			store, err = t.replay(dir, 0, floor, index, projs)
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		if t.ctx.Err() != nil {
			err = ErrClosed
		}
		return nil, "", fmt.Errorf("materialise index %d: %w", index, err)
	}
	return store, dir, nil
}

// replay opens the store in dir (a copied checkpoint at base, or nothing
// yet: base 0) and brings projs forward to index: through the redo
// records chained from base when every projection is wanted (and base is
// at or after floor, the FSM's last operator restore), then from the
// live archive's events.
func (t *TimeTravel) replay(dir string, base, floor, index uint64, projs []projections.Projection) (*kv.Store, error) {
	store, err := kv.Open(dir, kv.Config{CacheBytes: scratchCacheBytes, DisableWAL: true})
	if err != nil {
		return nil, err
	}
	if len(projs) == len(t.cfg.Projections) {
		if _, err := t.forward(store, base, floor, index); err != nil {
			store.Close()
			return nil, err
		}
	}
	if _, err := projections.Replay(t.ctx, t.cfg.FSM.Store(), store, projs, index, nil); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// copyBase copies the newest checkpoint at or below index into dir and
// returns its index; with none, or none taken at or after floor, it
// leaves dir to be created empty and returns 0.
func (t *TimeTravel) copyBase(index, floor uint64, dir string) (uint64, error) {
	at, path, release, ok := t.cps.acquire(index)
	if !ok {
		return 0, nil
	}
	defer release()
	if at < floor {
		return 0, nil
	}
	if err := kv.CopyCheckpoint(path, dir); err != nil {
		_ = os.RemoveAll(dir)
		return 0, err
	}
	return at, nil
}
