package rebuild

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sort"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// Stats reports what a rebuild read and applied.
type Stats struct {
	Events  uint64
	Entries uint64
	Last    uint64
}

// ReplayGCPercent is the Go collector's target (debug.SetGCPercent) for
// a process that does nothing but replay history into projections (an
// offline rebuild or verify, a replay). A replay keeps large maps of rows
// in memory and allocates for every event; collecting at 400% heap growth
// instead of Go's 100% trades memory for CPU: a 200,000-event rebuild
// from scratch ran at 21,200 instead of 18,400 events/s
// (docs/operations.md). A server keeps Go's default.
const ReplayGCPercent = 400

// rebuildBatchEntries is how many entries a rebuild commits per batch: a
// row the entries of a batch rewrite is written once (freshWriter). A
// variable so that tests commit often on short histories.
var rebuildBatchEntries uint64 = 4096

// rebuildChunk is how many decoded events travel from the reader to the
// applier at a time.
const rebuildChunk = 512

// Rebuild replays the archive in src into the empty store dst, applying
// every event to projs exactly as the FSM did, up to index to (0: all).
// progress, when set, is called after each committed batch. One goroutine
// reads and decodes the archive; into an empty store, each projection then
// applies it on its own goroutine (a lane), else the caller's applies it,
// in order.
func Rebuild(src kv.Reader, dst *kv.Store, projs []projections.Projection, to uint64, progress func(Stats)) (Stats, error) {
	fresh, err := isEmpty(dst)
	if err != nil {
		return Stats{}, err
	}
	if fresh && len(projs) > 1 {
		return scratchRebuild(context.Background(), src, dst, projs, to, 0, nil, progress)
	}
	w := newFreshWriter(dst, fresh, freshRowsLimit)
	defer w.close()
	if err := projections.CheckVersions(projections.NewView(w), projs); err != nil {
		return Stats{}, err
	}
	r := &replayer{projs: projs, store: dst, fw: w, w: w, tables: map[string]uint64{}, progress: progress}
	r.extra = func(w kv.Writer) error { return w.Set(layout.AppliedKey, kv.Uint64Value(r.st.Last)) }
	err = r.run(src, 1, to)
	return r.st, err
}

// replayer applies archived events to projections through a writer, entry
// by entry, exactly as the FSM did, committing every rebuildBatchEntries
// entries. It runs once over a range (Rebuild) or range after range, each
// starting where the last ended (an online rebuild catching up).
type replayer struct {
	projs []projections.Projection
	store *kv.Store
	fw    *freshWriter // the open batch, committed into store
	w     kv.Writer    // what a Tx writes through: fw, or a shadowWriter over it
	// tables holds the index of the last entry that changed each table.
	tables  map[string]uint64
	tx      *projections.Tx
	spare   *projections.Tx // the last entry's, reused for the next
	pending uint64          // entries since the last commit
	st      Stats
	// extra, when set, adds writes to the open batch before each commit.
	extra func(kv.Writer) error
	// progress, when set, is called after each commit.
	progress func(Stats)
	// check, when set, is called after each commit; an error ends the run.
	check func() error
	// sem, when set, is held while a chunk of events is applied, if busy
	// (nil: always) says so: lanes sharing it apply that many chunks at
	// once (lanes.limit).
	sem  chan struct{}
	busy func() bool
	// labels, when set, are the profiler labels the goroutine applying
	// chunks carries (lane=<projection>), set again for each chunk since
	// Pebble's own labelling within a commit drops them.
	labels context.Context
}

// run replays the archive of src from index from through to (0: to its
// end) and commits what it applied.
func (r *replayer) run(src kv.Reader, from, to uint64) error {
	chunks := make(chan []*events.Event, 4)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(chunks)
		readErr <- readArchive(src, from, to, chunks, stop)
	}()
	defer func() {
		close(stop)
		for range chunks {
		}
	}()
	if err := r.consume(chunks); err != nil {
		return err
	}
	return <-readErr
}

// consume applies the events of chunks until it closes, then commits.
func (r *replayer) consume(chunks <-chan []*events.Event) error {
	guard, _ := r.w.(*shadowWriter) // remembers a refusal a projection dropped
	for chunk := range chunks {
		if err := r.applyChunk(chunk, guard); err != nil {
			return err
		}
	}
	if r.tx != nil {
		r.endEntry()
	}
	return r.commit()
}

// applyChunk applies the events of chunk, holding sem when set.
func (r *replayer) applyChunk(chunk []*events.Event, guard *shadowWriter) error {
	if r.labels != nil {
		pprof.SetGoroutineLabels(r.labels)
	}
	if r.sem != nil && (r.busy == nil || r.busy()) {
		r.sem <- struct{}{}
		defer func() { <-r.sem }()
	}
	for _, ev := range chunk {
		if r.tx != nil && r.tx.Index() != ev.Index {
			r.endEntry()
			if r.pending >= rebuildBatchEntries {
				if err := r.commit(); err != nil {
					return err
				}
			}
		}
		if r.tx == nil {
			r.tx = r.nextTx(ev)
		}
		for _, p := range r.projs {
			err := p.Apply(r.tx, ev)
			if err == nil && guard != nil {
				err = guard.err
			}
			if err != nil {
				return fmt.Errorf("replay %s at %d: %w", p.Name(), ev.Index, err)
			}
		}
		r.st.Events++
		r.st.Last = ev.Index
	}
	return nil
}

func (r *replayer) endEntry() {
	for t := range r.tx.Changed() { // commit writes them in key order
		r.tables[t] = r.tx.Index()
	}
	r.st.Entries++
	r.pending++
	r.spare, r.tx = r.tx, nil
}

// nextTx returns the Tx of ev's entry, reusing the last one's.
func (r *replayer) nextTx(ev *events.Event) *projections.Tx {
	if tx := r.spare; tx != nil {
		r.spare = nil
		tx.Reset(ev.Index, ev.Time)
		return tx
	}
	return projections.NewReplayTx(r.w, ev.Index, ev.Time)
}

// commit writes the table indexes that moved and commits the open batch.
func (r *replayer) commit() error {
	for _, t := range sortedKeys(r.tables) {
		if err := r.w.Set(layout.TableIndexKey(t), kv.Uint64Value(r.tables[t])); err != nil {
			return err
		}
	}
	clear(r.tables)
	if r.extra != nil {
		if err := r.extra(r.fw); err != nil {
			return err
		}
	}
	if err := r.fw.commit(); err != nil {
		return err
	}
	r.pending = 0
	if r.progress != nil {
		r.progress(r.st)
	}
	if r.check != nil {
		return r.check()
	}
	return nil
}

// readArchive decodes the archive from index from up to index to (0: its
// end) and sends it in chunks until it ends or stop closes.
func readArchive(src kv.Reader, from, to uint64, out chan<- []*events.Event, stop <-chan struct{}) error {
	chunk := make([]*events.Event, 0, rebuildChunk)
	send := func() error {
		select {
		case out <- chunk:
			chunk = make([]*events.Event, 0, rebuildChunk)
			return nil
		case <-stop:
			return kv.ErrStop
		}
	}
	err := archive.Scan(src, from, to, func(index uint64, seq uint32, data []byte) error {
		// Decoded once for every projection (lane).
		ev, err := events.DecodeEventPredecoded(data)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		chunk = append(chunk, ev)
		if len(chunk) == rebuildChunk {
			return send()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(chunk) > 0 {
		if err := send(); err != nil {
			return nil
		}
	}
	return nil
}

func sortedKeys(m map[string]uint64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isEmpty(s *kv.Store) (bool, error) {
	empty := true
	err := s.Scan(nil, nil, false, func(_, _ []byte) error {
		empty = false
		return kv.ErrStop
	})
	return empty, err
}
