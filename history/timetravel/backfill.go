package timetravel

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/versions"
)

// fillBatchEntries is how many archived entries a backfill commits per
// batch, as one versions record (each write still at its entry's index).
const fillBatchEntries = 1024

// fillScanIndexes is how many indexes of the archive one scan reads, so a
// backfill holds no iterator over the live store for long.
const fillScanIndexes = 4096

// fillJob is a range of indexes to backfill: from..to, below the span
// that begins at to+1, replayed from the state at start (nothing when
// start is 0).
type fillJob struct {
	from, to, start uint64
	// base is the state at start when it is not nothing; writeBase says
	// its rows must be written as versions at from (a Config.Base: the
	// store holds no version of them yet).
	base      kv.Reader
	writeBase bool
}

// fillRun is the backfill under way.
type fillRun struct {
	job     fillJob
	started time.Time
	ctx     context.Context // cancelled by a stop
	cancel  context.CancelFunc
	done    chan struct{}
	// reached is the newest index replayed, events the events applied.
	reached, events atomic.Uint64
}

// backfill fills what the versions store lacks, one range at a time,
// whenever a seed tells it the spans changed, until ctx ends.
func (k *versionKeeper) backfill(ctx context.Context) error {
	for {
		run, err := k.nextFill(ctx)
		if err != nil {
			k.log.Warn("versions backfill could not begin", "err", err)
		}
		if run != nil {
			err := k.fill(run)
			close(run.done)
			k.running.CompareAndSwap(run, nil)
			k.notify()
			switch {
			case err == nil:
				k.metrics.backfills.Inc()
				k.log.Info("versions backfilled", "from", run.job.from, "to", run.job.to,
					"events", run.events.Load(), "took", k.clock.Now().Sub(run.started).Round(time.Millisecond))
				continue
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, context.Canceled):
				continue // stopped by a wipe: plan again
			default:
				k.log.Warn("versions backfill failed", "from", run.job.from, "to", run.job.to, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-k.wake:
		}
	}
}

// nextFill begins the fill of the lowest range the store lacks (none:
// nil): below its first span, down to the history's first index, or
// between two spans.
func (k *versionKeeper) nextFill(ctx context.Context) (*fillRun, error) {
	k.fmu.Lock()
	defer k.fmu.Unlock()
	if ctx.Err() != nil {
		return nil, nil
	}
	tag, _ := k.tag()
	if k.foreign(tag) {
		return nil, nil // the writer's next seed wipes the store
	}
	spans := k.store.Spans()
	if len(spans) == 0 {
		return nil, nil
	}
	if k.store.Filling() != nil { // cut short by a stop or a crash
		if err := k.store.AbortFill(); err != nil {
			return nil, err
		}
	}
	var job *fillJob
	want := k.oldestWanted(spans[len(spans)-1].To)
	if spans[0].From > want {
		job = &fillJob{from: 1, to: spans[0].From - 1}
		if k.base != nil {
			job = &fillJob{from: k.baseAt, to: spans[0].From - 1, start: k.baseAt, base: k.base, writeBase: true}
		}
	}
	for i := 0; job == nil && i+1 < len(spans); i++ {
		if spans[i].To+1 < spans[i+1].From && spans[i+1].From > want {
			r, err := k.store.At(spans[i].To, tag)
			if err != nil {
				return nil, err
			}
			job = &fillJob{from: spans[i].To + 1, to: spans[i+1].From - 1, start: spans[i].To,
				base: &appliedAt{r: r, index: kv.Uint64Value(spans[i].To)}}
		}
	}
	if job == nil {
		return nil, nil
	}
	if err := k.store.BeginFill(job.from, job.to, tag); err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(ctx)
	run := &fillRun{job: *job, started: k.clock.Now(), ctx: fctx, cancel: cancel, done: make(chan struct{})}
	run.reached.Store(job.start)
	k.running.Store(run)
	k.log.Info("versions backfill begins", "from", job.from, "to", job.to)
	return run, nil
}

// complete reports whether the store covers every index it means to
// serve up to its newest span's end, with no fill under way.
func (k *versionKeeper) complete() bool {
	if k.running.Load() != nil || k.store.Filling() != nil {
		return false
	}
	tag, _ := k.tag()
	spans := k.store.Spans()
	if len(spans) == 0 || k.foreign(tag) || spans[0].From > k.oldestWanted(spans[len(spans)-1].To) {
		return false
	}
	for i := 0; i+1 < len(spans); i++ {
		if spans[i].To+1 < spans[i+1].From {
			return false
		}
	}
	return true
}

// stopFillLocked cancels the fill under way, if any, and waits for it to
// return; fmu is held.
func (k *versionKeeper) stopFillLocked() {
	run := k.running.Swap(nil)
	if run == nil {
		return
	}
	run.cancel()
	<-run.done
}

// fill replays the archive from the job's start through to+1 into a
// scratch store, entry by entry as the FSM applied it, writing each
// batch's writes into the store's fill, and ends the fill.
func (k *versionKeeper) fill(run *fillRun) error {
	job := run.job
	defer run.cancel()
	st, err := kv.OpenScratchIn(k.scratch)
	if err != nil {
		return err
	}
	defer st.Close()
	if job.base != nil {
		if err := copyState(job.base, st, job.start); err != nil {
			return fmt.Errorf("backfill base state at %d: %w", job.start, err)
		}
	}
	if job.writeBase {
		if err := k.store.FillState(job.base, job.from, k.keep); err != nil {
			return err
		}
	}
	tag, _ := k.tag()
	r := &fillReplay{k: k, run: run, st: st, tag: tag, from: job.start}
	if job.start == 0 {
		r.meta = true
	}
	if err := r.replay(run.ctx, job.start+1, job.to+1); err != nil {
		return err
	}
	return k.store.EndFill()
}

// copyState copies the state rows of src into dst, recording at as its
// applied index.
func copyState(src kv.Reader, dst *kv.Store, at uint64) error {
	l := dst.Loader(0)
	defer l.Close()
	for _, p := range projections.StatePrefixes() {
		if err := src.Scan(p, kv.PrefixEnd(p), false, l.Set); err != nil {
			return err
		}
	}
	if err := l.Set(appliedKey, kv.Uint64Value(at)); err != nil {
		return err
	}
	return l.Commit()
}

// fillReplay applies archived entries to the projections in a scratch
// store as the FSM did (each entry's events in one Tx, then its table
// indexes, the applied index at each batch's end), handing each
// committed batch to the versions store's fill.
type fillReplay struct {
	k    *versionKeeper
	run  *fillRun
	st   *kv.Store
	tag  string
	from uint64 // the open batch starts after this index
	// meta: copy the live projection metadata into the first batch (a
	// replay from nothing holds none).
	meta    bool
	b       *kv.Batch
	tx      *projections.Tx
	marks   []versions.Mark
	entries int
}

// replay applies the entries in [lo, hi] and commits the last batch at
// hi.
func (r *fillReplay) replay(ctx context.Context, lo, hi uint64) error {
	r.open()
	defer func() { r.b.Close() }()
	if r.meta {
		p := []byte("pm/")
		if err := r.k.live.Scan(p, kv.PrefixEnd(p), false, r.b.Set); err != nil {
			return err
		}
	}
	for at := lo; at <= hi; at += fillScanIndexes {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(hi, at+fillScanIndexes-1)
		err := archive.Scan(r.k.live, at, end, func(index uint64, _ uint32, data []byte) error {
			ev, err := events.DecodeEventPredecoded(data)
			if err != nil {
				return fmt.Errorf("archive %d: %w", index, err)
			}
			if err := r.entry(ev); err != nil {
				return err
			}
			for _, p := range r.k.projs {
				if err := p.Apply(r.tx, ev); err != nil {
					return fmt.Errorf("replay %s at %d: %w", p.Name(), index, err)
				}
			}
			r.run.events.Add(1)
			r.k.metrics.backfillEvents.Inc()
			return nil
		})
		if err != nil {
			return err
		}
		if end == hi {
			break
		}
	}
	if err := r.endEntry(); err != nil {
		return err
	}
	return r.commit(hi)
}

// entry makes r.tx the Tx of ev's entry, ending the last entry (and
// committing its batch when full) when ev starts another.
func (r *fillReplay) entry(ev *events.Event) error {
	if r.tx != nil && r.tx.Index() == ev.Index {
		return nil
	}
	if r.tx != nil {
		last := r.tx.Index()
		if err := r.endEntry(); err != nil {
			return err
		}
		if r.entries >= fillBatchEntries {
			if err := r.commit(last); err != nil {
				return err
			}
			r.open()
		}
	}
	r.tx = projections.NewReplayTx(r.b, ev.Index, ev.Time)
	return nil
}

// endEntry records the open entry's table indexes and where its writes
// end.
func (r *fillReplay) endEntry() error {
	if r.tx == nil {
		return nil
	}
	if _, err := r.tx.Finish(); err != nil {
		return err
	}
	r.marks = append(r.marks, versions.Mark{Index: r.tx.Index(), Ops: r.b.Count()})
	r.entries++
	r.run.reached.Store(r.tx.Index())
	r.tx = nil
	return nil
}

func (r *fillReplay) open() {
	r.b, r.marks, r.entries = r.st.Batch(), nil, 0
}

// commit writes the applied index to, commits the batch and hands its
// writes to the fill.
func (r *fillReplay) commit(to uint64) error {
	if err := r.b.Set(appliedKey, kv.Uint64Value(to)); err != nil {
		return err
	}
	rec := versions.Record{From: r.from, To: to, Repr: r.b.Repr(), Marks: r.marks, Tag: r.tag}
	if err := r.b.Commit(); err != nil {
		return err
	}
	if err := r.k.store.FillBatch(rec, r.k.keep); err != nil {
		return err
	}
	r.from = to
	r.run.reached.Store(to)
	return nil
}

// progress says how far the backfill is, for an error or a status.
func (k *versionKeeper) progress() string {
	run := k.running.Load()
	if run == nil {
		return "a backfill from the archive is due"
	}
	j := run.job
	done := run.reached.Load()
	pct := 100 * float64(done-j.start) / float64(max(1, j.to+1-j.start))
	return fmt.Sprintf("the backfill of indexes %d to %d has reached %d (%.0f%%, %d events replayed)",
		j.from, j.to, done, pct, run.events.Load())
}
