package fsm

import (
	"log/slog"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// batchTimer times one raft batch FSM.Apply applies, for the FSM's
// metrics: the whole batch (ordo_fsm_batch_apply_seconds, FSM.MaxApply),
// each entry (ordo_fsm_entry_apply_seconds, FSM.MaxEntryApply) and the
// Pebble commit (ordo_fsm_batch_commit_seconds), and logs a slow batch or
// entry. It is the only reader of the clock on the apply path; without
// one (Config.Clock) it measures nothing and commit just commits.
type batchTimer struct {
	clock clock.Clock
	m     fsmMetrics
	log   *slog.Logger
	logs  []raftlog.Log
	// start is when the batch began, entry when the current entry did.
	start, entry time.Time
	// commitTook is the commit's share of the batch, for the slow log.
	commitTook time.Duration
}

// timeBatch starts timing the apply of logs.
func (f *FSM) timeBatch(logs []raftlog.Log) batchTimer {
	if f.clock == nil {
		return batchTimer{}
	}
	return batchTimer{clock: f.clock, m: f.metrics, log: f.log, logs: logs, start: f.clock.Now()}
}

// startEntry starts timing the next entry.
func (t *batchTimer) startEntry() {
	if t.clock != nil {
		t.entry = t.clock.Now()
	}
}

// endEntry ends timing the entry at index, which applied into r (err:
// it failed to).
func (t *batchTimer) endEntry(r kv.Reader, index uint64, err error) {
	if t.clock == nil {
		return
	}
	d := t.clock.Now().Sub(t.entry)
	t.m.observeEntry(d)
	if d >= slowEntry && err == nil {
		t.log.Warn("slow fsm entry", "index", index, "took", d, "events", archivedTypes(r, index))
	}
}

// commit commits the batch's writes, timing the commit.
func (t *batchTimer) commit(b *kv.Batch) error {
	if t.clock == nil {
		return b.Commit()
	}
	start := t.clock.Now()
	if err := b.Commit(); err != nil {
		return err
	}
	t.commitTook = t.clock.Now().Sub(start)
	t.m.commitSeconds.Observe(t.commitTook.Seconds())
	return nil
}

// done ends timing the batch, once its apply ended (or panicked).
func (t *batchTimer) done() {
	if t.clock == nil {
		return
	}
	d := t.clock.Now().Sub(t.start)
	t.m.batchSeconds.Observe(d.Seconds())
	t.m.observeMax(d)
	if d >= slowBatch {
		t.log.Warn("slow fsm batch", "entries", len(t.logs), "first_index", t.logs[0].Index,
			"took", d, "commit_took", t.commitTook)
	}
}

// slowBatch is the batch apply time past which the FSM logs a warning with
// the commit's share, so an operator can tell storage stalls from apply
// work.
const slowBatch = 500 * time.Millisecond

// slowEntry is the apply time of one entry past which the FSM logs it
// with the types of the events it archived.
const slowEntry = 100 * time.Millisecond

// archivedTypes returns the types of the events the entry at index
// archived in r, for a log line.
func archivedTypes(r kv.Reader, index uint64) []string {
	var out []string
	_ = archive.Scan(r, index, index, func(_ uint64, _ uint32, data []byte) error {
		if ev, err := events.DecodeEvent(data); err == nil {
			out = append(out, ev.Type)
		}
		return nil
	})
	return out
}
