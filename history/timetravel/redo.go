package timetravel

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/redo"
)

// redoSegmentBytes is the size at which the redo log starts a new
// segment: pruning frees whole segments.
var redoSegmentBytes int64 = 64 << 20

// redoQueue is how many committed batches, and redoQueueBytes how many
// bytes of them, may wait for the redo writer; past either a batch is
// dropped (the chain breaks there, reads across the gap replay events
// instead) rather than slowing the FSM or holding its memory.
const (
	redoQueue      = 256
	redoQueueBytes = 128 << 20
)

// redoKeeper records the FSM's committed batches in a redo log so that a
// past state is a checkpoint plus the batches after it, applied as they
// are, with no projection re-run: far cheaper than a replay of events.
type redoKeeper struct {
	log     *redo.Log
	queue   chan redo.Record
	queued  atomic.Int64 // bytes in queue
	done    sync.WaitGroup
	metrics *metrics
}

// openRedo opens the redo log in dir, tagged with the projections'
// versions (a log written by other versions is dropped), and starts the
// writer the FSM's commit hook (TimeTravel.committed) feeds.
func openRedo(dir string, fsm *projections.FSM, m *metrics) (*redoKeeper, error) {
	l, err := redo.Open(dir, versionsTag(fsm.Projections()), redoSegmentBytes)
	if err != nil {
		return nil, fmt.Errorf("timetravel: %w", err)
	}
	k := &redoKeeper{log: l, queue: make(chan redo.Record, redoQueue), metrics: m}
	k.done.Add(1)
	go k.write()
	return k, nil
}

// versionsTag names the projections and their versions.
func versionsTag(projs []projections.Projection) string {
	parts := make([]string, len(projs))
	for i, p := range projs {
		parts[i] = p.Name() + "=" + strconv.Itoa(p.Version())
	}
	return strings.Join(parts, ",")
}

// committed is the FSM's commit hook: it queues the batch, or drops it if
// the writer is that far behind.
func (k *redoKeeper) committed(c projections.Commit) {
	from, to, batch := c.From, c.To, c.Repr
	if k.queued.Load()+int64(len(batch)) > redoQueueBytes {
		k.metrics.redoDropped.Inc()
		return
	}
	select {
	case k.queue <- redo.Record{From: from, To: to, Batch: batch}:
		k.queued.Add(int64(len(batch)))
	default:
		k.metrics.redoDropped.Inc()
	}
}

func (k *redoKeeper) write() {
	defer k.done.Done()
	for rec := range k.queue {
		k.queued.Add(-int64(len(rec.Batch)))
		if err := k.log.Append(rec); err != nil {
			k.metrics.redoDropped.Inc()
		}
	}
}

// close writes what is queued and closes the log; the FSM's hook must be
// detached first.
func (k *redoKeeper) close() error {
	close(k.queue)
	k.done.Wait()
	return k.log.Close()
}

// forward brings store, a copy of the checkpoint at base (or an empty
// store, base 0), toward index by applying the redo records chained from
// base; it returns the index reached (base when no record applies). The
// records were written by this code's projection versions, so the
// checkpoint must hold the same ones; else nothing is applied. Nor are
// any when base is before floor, the FSM's last operator restore: the
// records there are of the history it replaced.
func (t *TimeTravel) forward(store *kv.Store, base, floor, index uint64) (uint64, error) {
	if t.redo == nil || base < floor {
		return base, nil
	}
	if _, n := t.redo.log.Reach(base, index); n == 0 {
		return base, nil
	}
	// A replay to base replays nothing: it checks the versions (and
	// records the code's in an empty store).
	if _, err := projections.Replay(t.ctx, t.cfg.FSM.Store(), store, t.cfg.Projections, base, nil); errors.Is(err, projections.ErrRebuildNeeded) {
		return base, nil
	} else if err != nil {
		return base, err
	}
	reached, err := t.redo.log.Read(base, index, func(r redo.Record) error {
		t.metrics.redoApplied.Inc()
		return store.ApplyRepr(r.Batch)
	})
	if err != nil {
		return reached, fmt.Errorf("apply redo records from %d: %w", base, err)
	}
	return reached, nil
}

// redoReaches reports whether a read at index would start from redo
// records: then a state of every projection costs little more than one
// of some.
func (t *TimeTravel) redoReaches(index, floor uint64) bool {
	if t.redo == nil {
		return false
	}
	base, _, release, ok := t.cps.acquire(index)
	if ok {
		release()
	}
	if base < floor {
		return false
	}
	_, n := t.redo.log.Reach(base, index)
	return n > 0
}

// pruneRedo drops the redo segments below the oldest of the dense
// checkpoints: reads below it start from a sparse checkpoint and replay
// events.
func (t *TimeTravel) pruneRedo() error {
	if t.redo == nil {
		return nil
	}
	list := t.cps.list()
	if len(list) == 0 {
		return nil
	}
	oldest := list[max(0, len(list)-t.cfg.CheckpointsKept)]
	_, err := t.redo.log.PruneBelow(oldest)
	return err
}

// redoDir is where the redo log lives.
func redoDir(dataDir string) string { return filepath.Join(dataDir, "redo") }
