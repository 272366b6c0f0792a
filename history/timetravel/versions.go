package timetravel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/versions"
)

// versionsQueue is how many committed batches, and versionsQueueBytes how
// many bytes of them, may wait for the versions writer; past either a
// batch is dropped and the store is seeded again from the state after the
// next one (reads between the two fall back to checkpoints). The count is
// large so that the batches applied while a seed scans the whole state
// (seconds on a large one) wait rather than force another seed; the bytes
// bound the memory.
const (
	versionsQueue      = 16384
	versionsQueueBytes = 256 << 20
)

// versionsCatchUp is how long a read at an index the versions writer has
// not reached yet waits for it before falling back to checkpoints.
var versionsCatchUp = 5 * time.Second

// versionKeeper keeps the versions store (storage/versions) in step with
// the FSM: every committed batch is appended, each write at the index of
// the entry that made it, and after a gap (a dropped batch, a restore, a
// projection rebuild's switch, a start after a crash) the store is seeded
// again from a snapshot of the live state, writing only the difference.
// Reads at any index its spans cover are then a seek per key.
type versionKeeper struct {
	store *versions.Store
	live  *kv.Store
	tag   string
	keep  [][]byte
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

	// expect and epoch are the next Commit's From and Epoch when no gap
	// came between; reseed says one did. Only the commit hook touches
	// them (on the FSM's apply path).
	expect, epoch uint64
	reseed        bool

	// wrote is closed and replaced after each item written (readers
	// waiting for the writer to catch up).
	mu    sync.Mutex
	wrote chan struct{}
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
// seeding it first when it does not end at the live state.
func openVersions(dir string, fsm *projections.FSM, kept uint64, m *metrics, log *slog.Logger) (*versionKeeper, error) {
	s, err := versions.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("timetravel: %w", err)
	}
	k := &versionKeeper{store: s, live: fsm.Store(), tag: versionsTag(fsm.Projections()), keep: projections.StatePrefixes(),
		queue: make(chan versionItem, versionsQueue), metrics: m, log: log, wrote: make(chan struct{}), kept: kept}
	if spans := s.Spans(); len(spans) > 0 {
		k.pruned = spans[0].From
	}
	k.epoch = fsm.Epoch()
	snap := k.live.Snapshot()
	applied, err := projections.NewView(snap).AppliedIndex()
	if err != nil {
		snap.Close()
		s.Close()
		return nil, err
	}
	k.expect = applied
	if last, tag := s.Last(); last != applied || tag != k.tag {
		k.queue <- versionItem{seed: snap, at: applied}
	} else {
		snap.Close()
	}
	k.done.Add(1)
	go k.write()
	return k, nil
}

// committed is the FSM's commit hook: it queues the batch, or, after a
// gap, a snapshot of the state the batch left to seed from.
func (k *versionKeeper) committed(c projections.Commit) {
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
	case k.queue <- versionItem{rec: versions.Record{From: c.From, To: c.To, Repr: c.Repr, Marks: marks, Tag: k.tag}}:
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
		if it.barrier != nil {
			close(it.barrier)
			continue
		}
		if it.seed != nil {
			st, err := k.store.Seed(it.seed, it.at, k.tag, k.keep)
			it.seed.Close()
			k.metrics.versionsSeeds.Inc()
			if err != nil {
				k.log.Warn("versions seed failed", "index", it.at, "err", err)
				k.broken.Store(true)
			} else {
				k.log.Info("versions seeded", "index", it.at, "written", st.Written, "compared", st.Scanned)
			}
		} else {
			k.queued.Add(-int64(len(it.rec.Repr)))
			if err := k.store.Append(it.rec, k.keep); err != nil {
				if !errors.Is(err, versions.ErrGap) {
					k.log.Warn("versions append failed", "from", it.rec.From, "to", it.rec.To, "err", err)
				}
				k.broken.Store(true)
			}
			k.prune(it.rec.To)
		}
		k.mu.Lock()
		close(k.wrote)
		k.wrote = make(chan struct{})
		k.mu.Unlock()
	}
}

// prune drops the versions older than the kept entries below index, once
// VersionsKept/4 entries have passed since the last prune.
func (k *versionKeeper) prune(index uint64) {
	if k.kept == 0 || index < k.kept || index-k.kept < k.pruned+max(1, k.kept/4) {
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

// reader returns a reader of the state at index from the versions store,
// waiting up to versionsCatchUp for the writer to reach an index past its
// newest span; ok is false when no span covers index, or the span that
// does began before floor (an operator restore replaced what it holds).
func (k *versionKeeper) reader(ctx context.Context, index, floor uint64) (kv.Reader, bool) {
	deadline := time.NewTimer(versionsCatchUp)
	defer deadline.Stop()
	for {
		k.mu.Lock()
		wrote := k.wrote
		k.mu.Unlock()
		if r, err := k.store.At(index, k.tag); err == nil {
			if !spanFrom(k.store.Spans(), index, floor) {
				return nil, false
			}
			return &appliedAt{r: r, index: kv.Uint64Value(index)}, true
		}
		if last, _ := k.store.Last(); index <= last || k.broken.Load() {
			return nil, false // in a gap, or before the first span
		}
		select {
		case <-wrote:
		case <-deadline.C:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
}

// spanFrom reports whether the span of spans covering index began at or
// after floor.
func spanFrom(spans []versions.Span, index, floor uint64) bool {
	for _, sp := range spans {
		if sp.From <= index && index <= sp.To {
			return sp.From >= floor
		}
	}
	return false
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
// be detached first.
func (k *versionKeeper) close() error {
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
