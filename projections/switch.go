package projections

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// ErrRebuildVoid ends a rebuild that a raft snapshot restore overtook: the
// state it was building from is gone.
var ErrRebuildVoid = errors.New("ordo: a raft snapshot was restored during the rebuild; run it again")

// Phases of a rebuild, as RebuildProgress reports them.
const (
	// PhaseBuilding: replaying the archive into the scratch store, toward
	// the head.
	PhaseBuilding = "building"
	// PhaseSwitching: holding the FSM's apply lock (writes wait), replaying
	// the last entries and switching the rebuilt projections live.
	PhaseSwitching = "switching"
	// PhaseDone: the rebuilt projections serve.
	PhaseDone = "done"
	// PhaseFailed: the rebuild stopped; its scratch store is deleted and the
	// live projections are as they were.
	PhaseFailed = "failed"
)

// RebuildProgress is where a rebuild stands; it is reported after every
// batch the rebuild commits.
type RebuildProgress struct {
	Projections []string
	Phase       string
	// Events is how many archived events the rebuild has replayed, Target
	// how many the archive held through Head, the applied index the
	// rebuild is catching up to; Index is the last index replayed.
	Events, Target uint64
	Index, Head    uint64
	// ReadPause, once the phase is PhaseDone, is how long the switch held
	// readers back (see kv.Store.Replace).
	ReadPause time.Duration
}

// LagEvents is how many archived events the rebuild is behind its target.
func (p RebuildProgress) LagEvents() uint64 {
	if p.Target > p.Events {
		return p.Target - p.Events
	}
	return 0
}

// observer returns the function rebuilds report progress to.
func (f *FSM) observer() func(RebuildProgress) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.observer == nil {
		return func(RebuildProgress) {}
	}
	return f.mu.observer
}

func (f *FSM) setObserver(obs func(RebuildProgress)) {
	f.mu.Lock()
	f.mu.observer = obs
	f.mu.Unlock()
}

// maxCatchUpRounds bounds how many times an online rebuild chases the
// applied index from a snapshot before it finishes under the apply lock
// whatever the gap.
const maxCatchUpRounds = 16

// rebuildOnline rebuilds projs from the archive into a scratch store
// while the live projections keep serving and the FSM keeps applying to
// them: it replays toward the applied index from consistent snapshots
// until it is within lag entries of it (or has tried maxCatchUpRounds
// times), writes what it built into the switch's table files, approaches
// the applied index again, flushes the live memtable, then takes the
// apply lock, replays the last entries from the store (nothing applies
// meanwhile, so nothing is lost or applied twice) and switches
// (shadowBuild.switchLive). On failure the scratch store is deleted and
// the live projections are untouched. Until it takes the
// apply lock, at most parallel projections replay at once (0: all) while
// busy (nil: always) says the server is applying entries.
func (f *FSM) rebuildOnline(ctx context.Context, projs []Projection, lag uint64, parallel int, busy func() bool, obs func(RebuildProgress)) error {
	gen := f.gen.Load()
	sb, err := newShadowBuild(f.store, projs)
	if err != nil {
		return err
	}
	sb.l.limit(parallel, busy)
	done := false
	defer func() {
		if err := sb.close(); err != nil {
			f.log.Error("remove a rebuild's scratch store", "err", err)
		}
		if !done {
			obs(RebuildProgress{Projections: names(projs), Phase: PhaseFailed})
		}
	}()
	check := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if f.gen.Load() != gen {
			return ErrRebuildVoid
		}
		return nil
	}
	prog := RebuildProgress{Projections: names(projs), Phase: PhaseBuilding}
	sb.l.setCheck(check)
	sb.l.progress = func(st RebuildStats) {
		prog.Events, prog.Index = st.Events, st.Last
		obs(prog)
	}
	// approach replays toward the applied index from snapshots until it is
	// within lag entries of it, or has tried maxCatchUpRounds times (a
	// write load faster than the rebuild waits for the rest).
	approach := func() error {
		for rounds := 0; rounds < maxCatchUpRounds; rounds++ {
			head := f.applied.Load()
			snap := f.store.Snapshot()
			target, err := archive.Len(snap)
			if err == nil {
				prog.Head, prog.Target = head, target
				obs(prog)
				err = sb.catchUp(snap, head)
			}
			snap.Close()
			if err != nil {
				return err
			}
			if err := check(); err != nil {
				return err
			}
			if f.applied.Load() <= sb.upTo+lag {
				return nil
			}
		}
		return nil
	}
	if err := approach(); err != nil {
		return err
	}
	// The bulk of the switch, copying what was built into table files,
	// runs while the FSM applies; the build then approaches again what it
	// applied meanwhile.
	if err := sb.prepare(); err != nil {
		return err
	}
	if f.prepared != nil {
		f.prepared()
	}
	if err := approach(); err != nil {
		return err
	}
	// The ingest under the lock rotates the memtable and syncs the
	// write-ahead log it leaves: flushed now, while the FSM applies, they
	// hold only what the last moments wrote; what the FSM applied during
	// the flush is approached again.
	if err := f.store.FlushMemtable(); err != nil {
		return err
	}
	if err := approach(); err != nil {
		return err
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if f.gen.Load() != gen {
		return ErrRebuildVoid
	}
	if err := f.finishLocked(sb, &prog, obs); err != nil {
		return err
	}
	done = true
	return nil
}

// rebuildLocked rebuilds projs from the archive through the applied index
// and switches them live; the caller holds the apply lock.
func (f *FSM) rebuildLocked(ctx context.Context, projs []Projection, obs func(RebuildProgress)) error {
	sb, err := newShadowBuild(f.store, projs)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if err := sb.close(); err != nil {
			f.log.Error("remove a rebuild's scratch store", "err", err)
		}
		if !done {
			obs(RebuildProgress{Projections: names(projs), Phase: PhaseFailed})
		}
	}()
	prog := RebuildProgress{Projections: names(projs), Phase: PhaseBuilding}
	sb.l.setCheck(ctx.Err)
	sb.l.progress = func(st RebuildStats) {
		prog.Events, prog.Index = st.Events, st.Last
		obs(prog)
	}
	if err := f.finishLocked(sb, &prog, obs); err != nil {
		return err
	}
	done = true
	return nil
}

// finishLocked replays the entries sb still lacks through the applied
// index and switches it live. The caller holds the apply lock; prog is the
// progress sb's lanes report (its phase is now PhaseSwitching).
func (f *FSM) finishLocked(sb *shadowBuild, prog *RebuildProgress, obs func(RebuildProgress)) error {
	prog.Phase = PhaseSwitching
	head := f.applied.Load()
	target, err := archive.Len(f.store)
	if err != nil {
		return err
	}
	prog.Head, prog.Target = head, target
	obs(*prog)
	sb.l.limit(0, nil) // writes wait: every core replays the rest
	if err := sb.catchUp(f.store, head); err != nil {
		return err
	}
	st := sb.l.stats()
	prog.Events, prog.Index = st.Events, st.Last
	obs(*prog)
	f.epoch.Add(1)
	held, err := sb.switchLive()
	if errors.Is(err, kv.ErrHalfReplaced) {
		// The live tables hold the file's rows without the writes after
		// it, and no stored version: stale, as the next start finds them.
		f.mu.Lock()
		for _, p := range sb.projs {
			if !slices.ContainsFunc(f.mu.stale, func(s Stale) bool { return s.Projection.Name() == p.Name() }) {
				f.mu.stale = append(f.mu.stale, Stale{Projection: p})
			}
		}
		f.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("switch %v: %w", prog.Projections, err)
	}
	prog.ReadPause = held
	rebuilt := map[string]bool{}
	for _, p := range sb.projs {
		rebuilt[p.Name()] = true
	}
	f.mu.Lock()
	var stale []Stale
	for _, s := range f.mu.stale {
		if !rebuilt[s.Projection.Name()] {
			stale = append(stale, s)
		}
	}
	var pending []string
	for _, name := range f.mu.pending {
		if !rebuilt[name] {
			pending = append(pending, name)
		}
	}
	f.mu.stale, f.mu.pending = stale, pending
	f.mu.Unlock()
	// Every watcher re-reads (a switch is rare; per-key watchers of the
	// rebuilt tables must wake too).
	f.notify.publish(head, nil, true)
	prog.Phase = PhaseDone
	obs(*prog)
	return nil
}

// markRebuild records, durably, that an operator asked for projs to be
// rebuilt, so that a stop before the switch does not lose the request.
func (f *FSM) markRebuild(projs []Projection) error {
	wb := f.store.WriteBatch()
	for _, p := range projs {
		if err := writeMarker(wb, p.Name(), rebuildMarker{Requested: f.applied.Load()}); err != nil {
			wb.Close()
			return err
		}
	}
	return wb.Commit(true)
}

// unmarkRebuild drops the markers of projs.
func (f *FSM) unmarkRebuild(projs []Projection) error {
	wb := f.store.WriteBatch()
	for _, p := range projs {
		if err := wb.Delete(markerKey(p.Name())); err != nil {
			wb.Close()
			return err
		}
	}
	return wb.Commit(true)
}

// pendingRebuilds returns the operators' rebuilds a stop interrupted.
func (f *FSM) pendingRebuilds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.mu.pending...)
}

func names(projs []Projection) []string {
	out := make([]string, len(projs))
	for i, p := range projs {
		out[i] = p.Name()
	}
	return out
}

func staleProjs(stale []Stale) []Projection {
	out := make([]Projection, len(stale))
	for i, s := range stale {
		out[i] = s.Projection
	}
	return out
}

func staleError(stale []Stale) error {
	list := make([]string, len(stale))
	for i, s := range stale {
		list[i] = s.String()
	}
	return fmt.Errorf("%w: %v", ErrRebuildNeeded, list)
}

// scratchRebuild rebuilds projs from the archive of src through index to
// into the empty store dst (Verify's scratch space, a replay's fresh
// store), a lane per projection. The lanes write into a scratch store of
// dst's, whose tables dst then ingests whole as table files: dst's LSM
// flushes and compacts none of the rows, and ends with them in one level.
func scratchRebuild(ctx context.Context, src kv.Reader, dst *kv.Store, projs []Projection, to uint64, parallel int, busy func() bool, obs func(RebuildStats)) (RebuildStats, error) {
	b := dst.Batch()
	if err := CheckVersions(NewView(b), projs); err != nil {
		b.Close()
		return RebuildStats{}, err
	}
	if err := b.Commit(); err != nil {
		return RebuildStats{}, err
	}
	scratch, err := dst.OpenScratch()
	if err != nil {
		return RebuildStats{}, err
	}
	defer scratch.Close()
	l := newLanes(scratch, true, projs, ctx.Err)
	defer l.close()
	// Rows no lane reads stay in the lanes' logs, out of the scratch
	// store, and go straight into the table files.
	l.keepRowsInMemory()
	st, workers, err := buildWith(l, src, to, parallel, busy, obs)
	if err != nil {
		return st, err
	}
	// The lanes wrote rows and table indexes only (their writers refuse
	// any other key), all of them committed now.
	var tables []string
	for _, p := range projs {
		tables = append(tables, p.Tables()...)
	}
	files, err := tableFiles(scratch, dst, tables, false, workers, l.logs())
	if err != nil {
		return st, fmt.Errorf("rebuild: %w", err)
	}
	wb := dst.WriteBatch()
	if err := wb.Set(appliedKey, kv.Uint64Value(st.Last)); err != nil {
		wb.Close()
		discardFiles(files)
		return st, err
	}
	_, err = dst.Replace(files, wb)
	return st, err
}

// buildInto replays projs from the archive of src through index to into
// the empty store scratch, a lane per projection, at most parallel at once
// while busy says so (lanes.limit); it returns what it replayed and how
// many goroutines the lanes leave room for now (lanes.workers).
func buildInto(ctx context.Context, src kv.Reader, scratch *kv.Store, projs []Projection, to uint64, parallel int, busy func() bool, obs func(RebuildStats)) (RebuildStats, int, error) {
	l := newLanes(scratch, true, projs, ctx.Err)
	defer l.close()
	return buildWith(l, src, to, parallel, busy, obs)
}

// buildWith is buildInto through the lanes l.
func buildWith(l *lanes, src kv.Reader, to uint64, parallel int, busy func() bool, obs func(RebuildStats)) (RebuildStats, int, error) {
	l.limit(parallel, busy)
	l.progress = obs
	if err := l.run(src, 1, to); err != nil {
		return l.stats(), 0, err
	}
	return l.stats(), l.workers(), nil
}
