package rebuild

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
)

// lanes replays the archive into several projections at once: one
// goroutine reads and decodes the archive, and each lane (one projection,
// with its own writer and batches) applies it on its own goroutine, so a
// rebuild of several projections uses every core. A CPU profile tells
// them apart by the label lane=<projection> (lane=archive for the
// reader): `go tool pprof -tags`. It relies on each
// projection reading only its own tables, which each lane's shadowWriter
// enforces; the events are shared and only read.
type lanes struct {
	rs   []*replayer
	sws  []*shadowWriter
	done []laneMark
	// progress, when set, is called after a lane commits, with the stats
	// of the lane furthest behind.
	progress func(Stats)
	mu       sync.Mutex // serialises progress calls
	// sem and busy are the limit set by limit.
	sem  chan struct{}
	busy func() bool
}

// laneMark is what a lane has replayed, readable from other goroutines.
type laneMark struct {
	events, entries, last atomic.Uint64
}

// newLanes returns a lane per projection of projs, writing into store;
// empty says the store holds none of their tables yet. check, when set,
// is called after each commit of each lane; an error ends the run.
func newLanes(store *kv.Store, empty bool, projs []projections.Projection, check func() error) *lanes {
	l := &lanes{done: make([]laneMark, len(projs))}
	for i, p := range projs {
		owned := map[string]bool{}
		for _, t := range p.Tables() {
			owned[t] = true
		}
		fw := newFreshWriter(store, empty, freshRowsLimit/len(projs)) // the lanes share the bound
		sw := &shadowWriter{w: fw, owned: owned}
		r := &replayer{projs: []projections.Projection{p}, store: store, fw: fw, w: sw, tables: map[string]uint64{}, check: check,
			labels: pprof.WithLabels(context.Background(), pprof.Labels("lane", p.Name()))}
		l.sws = append(l.sws, sw)
		mark := &l.done[i]
		r.progress = func(st Stats) {
			mark.events.Store(st.Events)
			mark.entries.Store(st.Entries)
			mark.last.Store(st.Last)
			l.report()
		}
		l.rs = append(l.rs, r)
	}
	return l
}

// stats returns the stats of the lane furthest behind.
func (l *lanes) stats() Stats {
	var st Stats
	for i := range l.done {
		m := &l.done[i]
		if i == 0 || m.events.Load() < st.Events {
			st = Stats{Events: m.events.Load(), Entries: m.entries.Load(), Last: m.last.Load()}
		}
	}
	return st
}

func (l *lanes) report() {
	if l.progress == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.progress(l.stats())
}

// run replays the archive of src from index from through to (0: to its
// end) through every lane, each of which commits what it applied.
func (l *lanes) run(src kv.Reader, from, to uint64) error {
	chunks := make(chan []*events.Event, 4)
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	readErr := make(chan error, 1)
	go func() {
		defer close(chunks)
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("lane", "archive")))
		readErr <- readArchive(src, from, to, chunks, stop)
	}()
	ins := make([]chan []*events.Event, len(l.rs))
	errs := make([]error, len(l.rs))
	var wg sync.WaitGroup
	for i, r := range l.rs {
		ins[i] = make(chan []*events.Event, 4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = r.consume(ins[i]); errs[i] != nil {
				halt()
				for range ins[i] { // let the others go on to the end of the chunks
				}
			}
		}()
	}
	for chunk := range chunks {
		for _, in := range ins {
			in <- chunk
		}
	}
	for _, in := range ins {
		close(in)
	}
	wg.Wait()
	halt()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return <-readErr
}

// limit has at most n lanes apply events at once (0: all of them) while
// busy reports true (nil: always), so a rebuild running beside a serving
// server leaves it cores while it applies entries, and takes them all
// while it is idle.
func (l *lanes) limit(n int, busy func() bool) {
	var sem chan struct{}
	if n > 0 && n < len(l.rs) {
		sem = make(chan struct{}, n)
	}
	l.sem, l.busy = sem, busy
	for _, r := range l.rs {
		r.sem, r.busy = sem, busy
	}
}

// workers returns how many goroutines work the lanes leave room for now:
// their limit while busy says so, else every core.
func (l *lanes) workers() int {
	if l.sem != nil && (l.busy == nil || l.busy()) {
		return cap(l.sem)
	}
	return runtime.GOMAXPROCS(0)
}

// setCheck makes every lane call check after each commit.
func (l *lanes) setCheck(check func() error) {
	for _, r := range l.rs {
		r.check = check
	}
}

// track has every lane record the keys it writes from now on, and its
// row log, if any, take no more rows: what it holds is in the switch's
// table files, what follows goes to the store, for the switch to copy
// over them (Build.Prepare).
func (l *lanes) track() {
	for i, sw := range l.sws {
		touched := map[string]struct{}{}
		sw.touched = touched
		if log := l.rs[i].fw.log; log != nil {
			log.freeze(func(k []byte) bool {
				_, ok := touched[string(k)]
				return ok
			})
		}
	}
}

// touched returns, in key order, the keys the lanes wrote since track.
func (l *lanes) touched() [][]byte {
	var out [][]byte
	for _, sw := range l.sws {
		for k := range sw.touched {
			out = append(out, []byte(k))
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

// keepRowsInMemory has every lane keep the rows of tables it has not read in a
// row log (rowLog) rather than in the store, all of the lanes' logs
// within rowLogBudget, and the rows it commits to the tables it reads in
// a row arena (rowArena), within rowArenaBudget (both less in a process
// with a small soft memory limit): for a build whose table files are
// written from the store and the logs (tableFiles), read by nothing else.
func (l *lanes) keepRowsInMemory() {
	logs, arenas := rebuildBudget(rowLogBudget, 8), rebuildBudget(rowArenaBudget, 16)
	for _, r := range l.rs {
		r.fw.log = newRowLog(logs)
		r.fw.arena = newRowArena(arenas)
	}
}

// logs returns the lanes' row logs (none unless keepRowsInMemory).
func (l *lanes) logs() []*rowLog {
	var out []*rowLog
	for _, r := range l.rs {
		if r.fw.log != nil {
			out = append(out, r.fw.log)
		}
	}
	return out
}

// close releases the lanes' open batches and the memory of their row
// logs and arenas.
func (l *lanes) close() {
	for _, r := range l.rs {
		r.fw.close()
		if r.fw.log != nil {
			r.fw.log.release()
		}
		if r.fw.arena != nil {
			r.fw.arena.reset()
		}
	}
}
