package timetravel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
)

// retryAfter is the least wait after a failed checkpoint.
const retryAfter = 10 * time.Second

// Run takes a checkpoint whenever CheckpointEvery entries were applied
// since the newest one and CheckpointMinInterval has passed since the last
// one this process took, until ctx ends. It only reads the live store
// (Pebble checkpoints run beside writes), so the FSM never waits for it;
// a failed checkpoint is logged and retried at the next interval. It runs
// on every server, leader or not: checkpoints are local. With
// DisableCheckpoints it only waits for ctx.
func (t *TimeTravel) Run(ctx context.Context) error {
	if t.cfg.DisableCheckpoints {
		<-ctx.Done()
		return nil
	}
	notify := t.cfg.FSM.Notifier()
	var notBefore time.Time // no checkpoint before this time
	for {
		applied, next := notify.Applied()
		var timer *time.Timer
		var wait <-chan time.Time
		if applied >= t.cps.newest()+t.cfg.CheckpointEvery {
			now := t.cfg.Clock()
			if !now.Before(notBefore) {
				notBefore = now.Add(t.cfg.CheckpointMinInterval)
				if _, err := t.Checkpoint(); err != nil {
					t.metrics.failures.Inc()
					t.log.Warn("checkpoint failed", "applied", applied, "err", err)
					notBefore = now.Add(max(t.cfg.CheckpointMinInterval, retryAfter))
				}
				continue
			}
			timer = time.NewTimer(notBefore.Sub(now))
			wait = timer.C
		}
		select {
		case <-ctx.Done():
		case <-next:
		case <-wait:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// Checkpoint takes a checkpoint of the live store now, keeps it under the
// applied index it holds, prunes (the CheckpointsKept newest stay, and
// SparseCheckpointsKept older ones spaced CheckpointEvery×CheckpointsKept
// apart) and returns that index. Taking one at an index already kept changes nothing.
func (t *TimeTravel) Checkpoint() (uint64, error) {
	t.takeMu.Lock()
	defer t.takeMu.Unlock()
	start := t.cfg.Clock()
	tmp := filepath.Join(t.cps.dir, tmpPrefix+strconv.FormatUint(t.seq.Add(1), 10))
	index, err := t.take(tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return 0, err
	}
	if index == 0 || t.cps.has(index) {
		_ = os.RemoveAll(tmp)
		return index, nil
	}
	if err := t.cps.publish(tmp, index); err != nil {
		_ = os.RemoveAll(tmp)
		return 0, err
	}
	pruned, err := t.cps.prune(t.cfg.CheckpointsKept, t.cfg.SparseCheckpointsKept, t.cfg.sparseGap())
	err = errors.Join(err, t.pruneRedo())
	t.metrics.taken.Inc()
	t.metrics.pruned.Add(float64(pruned))
	t.metrics.lastIndex.Set(float64(index))
	t.metrics.seconds.Observe(t.cfg.Clock().Sub(start).Seconds())
	t.log.Info("checkpoint taken", "index", index, "pruned", pruned, "took", t.cfg.Clock().Sub(start))
	if err != nil {
		return index, fmt.Errorf("prune checkpoints: %w", err)
	}
	return index, nil
}

// take checkpoints the live store into tmp, then opens the copy once to
// read the applied index it holds and flush the log it carries into a
// table, so the copies readers make open without replaying a log. The
// live store's memtable is flushed first, so the checkpoint links tables
// instead of copying (and replaying) a log of up to a memtable's size;
// the FSM writes on into a fresh memtable meanwhile.
func (t *TimeTravel) take(tmp string) (uint64, error) {
	live := t.cfg.FSM.Store()
	if err := live.FlushMemtable(); err != nil {
		return 0, err
	}
	if err := live.Checkpoint(tmp); err != nil {
		return 0, err
	}
	s, err := kv.Open(tmp, kv.Config{CacheBytes: 1 << 20, DisableCompactions: true})
	if err != nil {
		return 0, fmt.Errorf("open checkpoint: %w", err)
	}
	index, err := projections.NewView(s).AppliedIndex()
	if err == nil {
		err = s.FlushMemtable()
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return index, nil
}
