package timetravel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/versions"
)

// versionsQueue is how many committed batches, and versionsQueueBytes how
// many bytes of them, may wait for the versions writer; past either a
// batch is dropped and the store is seeded again from the state after the
// next one (the backfill then fills the gap). The count is large so that
// the batches applied while a seed scans the whole state (seconds on a
// large one) wait rather than force another seed; the bytes bound the
// memory.
const (
	versionsQueue      = 16384
	versionsQueueBytes = 256 << 20
)

// versionsCatchUp is how long a read at an index the versions writer has
// not reached yet waits for it.
var versionsCatchUp = 5 * time.Second

// versionKeeper keeps the versions store (storage/versions) in step with
// the FSM: every committed batch is appended, each write at the index of
// the entry that made it, and after a gap (a dropped batch, a restore, a
// projection rebuild's switch, a start after a crash) the store is seeded
// again from a snapshot of the live state, writing only the difference;
// the backfill (backfill.go) then fills what lies below or between the
// spans from the archive. Reads at any index its spans cover are a seek
// per key.
//
// Two goroutines write: the writer (appends, seeds, prunes; started by
// openVersions) and the backfill (Run). fmu orders them: the backfill
// begins a fill only under it, and the writer holds it while it stops a
// fill and wipes the store (a restore or new projection versions make
// every version written so far describe another history).
type versionKeeper struct {
	store   *versions.Store
	fsm     *fsm.FSM
	live    *kv.Store
	projs   []projections.Projection
	keep    [][]byte
	base    kv.Reader
	baseAt  uint64
	scratch string
	// kept is how many newest entries are kept (0: all); pruned is the
	// index the last prune cut below.
	kept    uint64
	pruned  uint64
	queue   chan versionItem
	queued  atomic.Int64 // bytes of records in queue
	broken  atomic.Bool  // the writer failed an item: seed again
	done    sync.WaitGroup
	metrics *metrics
	log     *slog.Logger
	// clock times backfills and bounds a read's wait (Config.Clock).
	clock clock.Clock

	// expect and epoch are the next Commit's From and Epoch when no gap
	// came between; reseed says one did. Only the commit hook touches
	// them (on the FSM's apply path).
	expect, epoch uint64
	reseed        bool

	// wake tells the backfill the spans changed (a seed).
	wake chan struct{}
	// fmu serialises beginning and stopping fills; running is the fill
	// under way (nil: none).
	fmu     sync.Mutex
	running atomic.Pointer[fillRun]

	mu struct {
		sync.Mutex
		// wrote is closed and replaced after each item written and
		// each fill's end (readers waiting for the store to change).
		wrote chan struct{}
		// tag names what the store's rows are: the projection versions
		// and the restore they follow; restored is that restore's index
		// (FSM.RestoredAt) when the tag was taken.
		tag      string
		restored uint64
	}
}

// versionItem is a batch to append, a snapshot to seed from, or a
// barrier to close once everything queued before it is written.
type versionItem struct {
	rec     versions.Record
	seed    *kv.Snapshot
	at      uint64
	barrier chan struct{}
}

// openVersions opens the versions store in dir and starts its writer,
// seeding it first when it does not end at the live state. A store of
// another history (a restore since) or other projection versions is
// wiped first.
func openVersions(dir, scratch string, cfg Config, m *metrics) (*versionKeeper, error) {
	s, err := versions.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("timetravel: %w", err)
	}
	k := &versionKeeper{store: s, fsm: cfg.FSM, live: cfg.FSM.Store(), projs: cfg.Projections, keep: projections.StatePrefixes(),
		base: cfg.Base, baseAt: cfg.BaseIndex, scratch: scratch, kept: cfg.VersionsKept,
		queue: make(chan versionItem, versionsQueue), metrics: m, log: cfg.Logger, clock: cfg.Clock, wake: make(chan struct{}, 1)}
	k.mu.wrote = make(chan struct{})
	k.mu.tag, k.mu.restored = k.currentTag()
	k.epoch = cfg.FSM.Epoch()
	snap := k.live.Snapshot()
	applied, err := projections.NewView(snap).AppliedIndex()
	if err != nil {
		snap.Close()
		s.Close()
		return nil, err
	}
	k.expect = applied
	if k.foreign(k.mu.tag) {
		k.log.Info("versions store holds another history or other projection versions: starting it again")
		if err := s.Wipe(); err != nil {
			snap.Close()
			s.Close()
			return nil, fmt.Errorf("timetravel: %w", err)
		}
	}
	if spans := s.Spans(); len(spans) > 0 {
		k.pruned = spans[0].From
	}
	if last, tag := s.Last(); last != applied || tag != k.mu.tag || len(s.Spans()) == 0 {
		k.queue <- versionItem{seed: snap, at: applied}
	} else {
		snap.Close()
	}
	k.done.Add(1)
	go k.write()
	return k, nil
}

// currentTag returns the tag of what the live store holds now.
func (k *versionKeeper) currentTag() (string, uint64) {
	restored := k.fsm.RestoredAt()
	return versionsTag(k.fsm.Projections()) + "@" + strconv.FormatUint(restored, 10), restored
}

// versionsTag names the projection versions rows were written by.
func versionsTag(projs []projections.Projection) string {
	parts := make([]string, len(projs))
	for i, p := range projs {
		parts[i] = p.Name() + "=" + strconv.Itoa(p.Version())
	}
	return strings.Join(parts, ",")
}

// foreign reports whether the store holds a span or a fill of another
// tag than tag.
func (k *versionKeeper) foreign(tag string) bool {
	for _, sp := range k.store.Spans() {
		if sp.Tag != tag {
			return true
		}
	}
	f := k.store.Filling()
	return f != nil && f.Tag != tag
}

// tag returns the store's tag and the restore it follows.
func (k *versionKeeper) tag() (string, uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.mu.tag, k.mu.restored
}

// committed is the FSM's commit hook: it queues the batch, or, after a
// gap, a snapshot of the state the batch left to seed from.
func (k *versionKeeper) committed(c fsm.Commit) {
	if k.broken.Swap(false) {
		k.reseed = true
	}
	gap := k.reseed || c.Epoch != k.epoch || c.From != k.expect
	k.expect, k.epoch = c.To, c.Epoch
	if gap {
		snap := k.live.Snapshot() // the hook runs after the commit: the state at c.To
		select {
		case k.queue <- versionItem{seed: snap, at: c.To}:
			k.reseed = false
		default:
			snap.Close()
			k.reseed = true
			k.metrics.versionsDropped.Inc()
		}
		return
	}
	if k.queued.Load()+int64(len(c.Repr)) > versionsQueueBytes {
		k.reseed = true
		k.metrics.versionsDropped.Inc()
		return
	}
	marks := make([]versions.Mark, len(c.Marks))
	for i, m := range c.Marks {
		marks[i] = versions.Mark{Index: m.Index, Ops: m.Ops}
	}
	select {
	case k.queue <- versionItem{rec: versions.Record{From: c.From, To: c.To, Repr: c.Repr, Marks: marks}}:
		k.queued.Add(int64(len(c.Repr)))
	default:
		k.reseed = true
		k.metrics.versionsDropped.Inc()
	}
}

// write appends and seeds what the hook queues, in order.
func (k *versionKeeper) write() {
	defer k.done.Done()
	for it := range k.queue {
		switch {
		case it.barrier != nil:
			close(it.barrier)
			continue
		case it.seed != nil:
			k.seed(it.seed, it.at)
			it.seed.Close()
		default:
			k.queued.Add(-int64(len(it.rec.Repr)))
			it.rec.Tag, _ = k.tag()
			if err := k.store.Append(it.rec, k.keep); err != nil {
				if !errors.Is(err, versions.ErrGap) {
					k.log.Warn("versions append failed", "from", it.rec.From, "to", it.rec.To, "err", err)
				}
				k.broken.Store(true)
			}
			k.prune(it.rec.To)
		}
		k.notify()
	}
}

// notify wakes the readers waiting for the store to change.
func (k *versionKeeper) notify() {
	k.mu.Lock()
	close(k.mu.wrote)
	k.mu.wrote = make(chan struct{})
	k.mu.Unlock()
}

// seed starts a span at at from snap, the live state there. When the
// state's tag changed (a restore, new projection versions), the backfill
// under way is stopped and the store wiped first: every version in it
// describes another history. The backfill is then told to fill below.
func (k *versionKeeper) seed(snap *kv.Snapshot, at uint64) {
	tag, restored := k.currentTag()
	k.fmu.Lock()
	if k.foreign(tag) {
		k.stopFillLocked()
		if err := k.store.Wipe(); err != nil {
			k.log.Warn("versions wipe failed", "err", err)
		}
		k.pruned = 0
		k.log.Info("versions store started again: another history or other projection versions", "index", at)
	}
	k.mu.Lock()
	k.mu.tag, k.mu.restored = tag, restored
	k.mu.Unlock()
	st, err := k.store.Seed(snap, at, tag, k.keep)
	k.fmu.Unlock()
	k.metrics.versionsSeeds.Inc()
	if err != nil {
		k.log.Warn("versions seed failed", "index", at, "err", err)
		k.broken.Store(true)
		return
	}
	k.log.Info("versions seeded", "index", at, "written", st.Written, "compared", st.Scanned)
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// prune drops the versions older than the kept entries below index, once
// VersionsKept/4 entries have passed since the last prune, and never
// while a backfill is under way.
func (k *versionKeeper) prune(index uint64) {
	if k.kept == 0 || index < k.kept || index-k.kept < k.pruned+max(1, k.kept/4) || k.store.Filling() != nil {
		return
	}
	below := index - k.kept
	st, err := k.store.Prune(below)
	if err != nil {
		k.log.Warn("versions prune failed", "below", below, "err", err)
		return
	}
	k.pruned = below
	k.metrics.versionsPruned.Add(float64(st.Removed))
	k.log.Info("versions pruned", "below", below, "removed", st.Removed, "kept", st.Kept)
}

// oldestWanted is the oldest index the store means to serve once
// backfilled, when its newest span ends at head: the history's first
// index (1, or Config.BaseIndex), or with VersionsKept the oldest kept.
func (k *versionKeeper) oldestWanted(head uint64) uint64 {
	low := max(1, k.baseAt)
	if k.kept > 0 && head > k.kept {
		low = max(low, head-k.kept)
	}
	return low
}

// reader returns a reader of the state at index from the versions store,
// waiting up to versionsCatchUp for the writer to reach an index past its
// newest span. An index it does not cover is a *NotServedError.
func (k *versionKeeper) reader(ctx context.Context, index uint64) (*appliedAt, error) {
	deadline := k.clock.NewTimer(versionsCatchUp)
	defer deadline.Stop()
	for {
		k.mu.Lock()
		wrote, tag, restored := k.mu.wrote, k.mu.tag, k.mu.restored
		k.mu.Unlock()
		if restored != k.fsm.RestoredAt() {
			return nil, &NotServedError{Index: index, Indexing: true,
				Reason: "the history is being indexed again after a restore"}
		}
		if r, err := k.store.At(index, tag); err == nil {
			return &appliedAt{r: r, index: kv.Uint64Value(index)}, nil
		}
		if last, _ := k.store.Last(); index <= last || k.broken.Load() {
			return nil, k.refusal(index)
		}
		select {
		case <-wrote:
		case <-deadline.C():
			return nil, &NotServedError{Index: index, Indexing: true,
				Reason: fmt.Sprintf("the versions store is %d entries behind the applied index", k.lag(k.fsm.Applied()))}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// refusal says why index, at or below the newest span's end, is not
// covered: older than what the store means to serve, or not indexed yet.
func (k *versionKeeper) refusal(index uint64) error {
	head, _ := k.store.Last()
	want := k.oldestWanted(head)
	if index < want {
		oldest := want
		if spans := k.store.Spans(); len(spans) > 0 && spans[0].From < want {
			oldest = spans[0].From
		}
		reason := fmt.Sprintf("it is before the history this server holds, which begins at %d", want)
		if k.kept > 0 && want > max(1, k.baseAt) {
			reason = fmt.Sprintf("it is older than the %d newest entries kept (time_travel.versions_kept)", k.kept)
		}
		return &NotServedError{Index: index, Oldest: oldest, Reason: reason}
	}
	return &NotServedError{Index: index, Indexing: true, Reason: "the history is being indexed: " + k.progress()}
}

// settle waits until what was queued before it is written (and pruned).
func (k *versionKeeper) settle() {
	done := make(chan struct{})
	k.queue <- versionItem{barrier: done}
	<-done
}

// lag returns how many indexes the versions store is behind applied.
func (k *versionKeeper) lag(applied uint64) uint64 {
	last, _ := k.store.Last()
	if last >= applied {
		return 0
	}
	return applied - last
}

// close writes what is queued and closes the store; the FSM's hook must
// be detached first, and the backfill stopped (Run returned).
func (k *versionKeeper) close() error {
	k.fmu.Lock()
	k.stopFillLocked()
	k.fmu.Unlock()
	close(k.queue)
	k.done.Wait()
	return k.store.Close()
}

// appliedAt reads a state at index, answering the applied index with it:
// the versions store holds the applied index as each batch wrote it, and
// index may lie inside a batch.
type appliedAt struct {
	r     kv.Reader
	index []byte
}

var appliedKey = projections.AppliedKey()

func (a *appliedAt) Get(key []byte) ([]byte, error) {
	if bytes.Equal(key, appliedKey) {
		return bytes.Clone(a.index), nil
	}
	return a.r.Get(key)
}

func (a *appliedAt) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return a.r.Scan(lower, upper, reverse, fn)
}
