package fsm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/projections/rebuild"
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
	// Prepared says an online rebuild has written what it built into the
	// switch's table files (rebuild.Build.Prepare): what it replays from
	// then on, the switch copies over them.
	Prepared bool
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
// (rebuild.Build.Switch). On failure the scratch store is deleted and
// the live projections are untouched. Until it takes the
// apply lock, at most parallel projections replay at once (0: all) while
// busy (nil: always) says the server is applying entries.
func (f *FSM) rebuildOnline(ctx context.Context, projs []projections.Projection, lag uint64, parallel int, busy func() bool, obs func(RebuildProgress)) error {
	gen := f.gen.Load()
	sb, err := rebuild.NewBuild(f.store, projs)
	if err != nil {
		return err
	}
	sb.Limit(parallel, busy)
	done := false
	defer func() {
		if err := sb.Close(); err != nil {
			f.log.Error("remove a rebuild's scratch store", "err", err)
		}
		if !done {
			obs(RebuildProgress{Projections: projections.Names(projs), Phase: PhaseFailed})
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
	prog := RebuildProgress{Projections: projections.Names(projs), Phase: PhaseBuilding}
	sb.OnCommit(check, func(st rebuild.Stats) {
		prog.Events, prog.Index = st.Events, st.Last
		obs(prog)
	})
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
				err = sb.CatchUp(snap, head)
			}
			snap.Close()
			if err != nil {
				return err
			}
			if err := check(); err != nil {
				return err
			}
			if f.applied.Load() <= sb.UpTo()+lag {
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
	if err := sb.Prepare(); err != nil {
		return err
	}
	prog.Prepared = true
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
func (f *FSM) rebuildLocked(ctx context.Context, projs []projections.Projection, obs func(RebuildProgress)) error {
	sb, err := rebuild.NewBuild(f.store, projs)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if err := sb.Close(); err != nil {
			f.log.Error("remove a rebuild's scratch store", "err", err)
		}
		if !done {
			obs(RebuildProgress{Projections: projections.Names(projs), Phase: PhaseFailed})
		}
	}()
	prog := RebuildProgress{Projections: projections.Names(projs), Phase: PhaseBuilding}
	sb.OnCommit(ctx.Err, func(st rebuild.Stats) {
		prog.Events, prog.Index = st.Events, st.Last
		obs(prog)
	})
	if err := f.finishLocked(sb, &prog, obs); err != nil {
		return err
	}
	done = true
	return nil
}

// finishLocked replays the entries sb still lacks through the applied
// index and switches it live. The caller holds the apply lock; prog is the
// progress sb's lanes report (its phase is now PhaseSwitching).
func (f *FSM) finishLocked(sb *rebuild.Build, prog *RebuildProgress, obs func(RebuildProgress)) error {
	prog.Phase = PhaseSwitching
	head := f.applied.Load()
	target, err := archive.Len(f.store)
	if err != nil {
		return err
	}
	prog.Head, prog.Target = head, target
	obs(*prog)
	sb.Limit(0, nil) // writes wait: every core replays the rest
	if err := sb.CatchUp(f.store, head); err != nil {
		return err
	}
	st := sb.Stats()
	prog.Events, prog.Index = st.Events, st.Last
	obs(*prog)
	f.epoch.Add(1)
	held, err := sb.Switch()
	if errors.Is(err, kv.ErrHalfReplaced) {
		// The live tables hold the file's rows without the writes after
		// it, and no stored version: stale, as the next start finds them.
		f.mu.Lock()
		for _, p := range sb.Projections() {
			if !slices.ContainsFunc(f.mu.stale, func(s projections.Stale) bool { return s.Projection.Name() == p.Name() }) {
				f.mu.stale = append(f.mu.stale, projections.Stale{Projection: p})
			}
		}
		f.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("switch %v: %w", prog.Projections, err)
	}
	prog.ReadPause = held
	rebuilt := map[string]bool{}
	for _, p := range sb.Projections() {
		rebuilt[p.Name()] = true
	}
	f.mu.Lock()
	var stale []projections.Stale
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
	f.notify.Publish(head, nil, true)
	prog.Phase = PhaseDone
	obs(*prog)
	return nil
}

// markRebuild records, durably, that an operator asked for projs to be
// rebuilt, so that a stop before the switch does not lose the request.
func (f *FSM) markRebuild(projs []projections.Projection) error {
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
func (f *FSM) unmarkRebuild(projs []projections.Projection) error {
	wb := f.store.WriteBatch()
	for _, p := range projs {
		if err := wb.Delete(layout.MarkerKey(p.Name())); err != nil {
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

func staleProjs(stale []projections.Stale) []projections.Projection {
	out := make([]projections.Projection, len(stale))
	for i, s := range stale {
		out[i] = s.Projection
	}
	return out
}

func staleError(stale []projections.Stale) error {
	list := make([]string, len(stale))
	for i, s := range stale {
		list[i] = s.String()
	}
	return fmt.Errorf("%w: %v", projections.ErrRebuildNeeded, list)
}
