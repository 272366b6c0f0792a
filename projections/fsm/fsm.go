package fsm

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// FSM applies committed entries to the archive and the projections.
type FSM struct {
	store   *kv.Store
	projs   []projections.Projection
	notify  *projections.Notifier
	log     *slog.Logger
	applied atomic.Uint64
	// restored is the index of the last operator restore the store holds
	// (RestoredAt).
	restored atomic.Uint64
	metrics  fsmMetrics
	clock    clock.Clock
	// counters is touched only by Apply and Restore, on raft's FSM goroutine.
	counters   archiveCounters
	allowStale bool
	// compat is this build's versions and the FSM's halt (compat.go,
	// halt.go).
	compat *compatState

	// applyMu is held by Apply and Restore, and by a rebuild while it
	// replays the last entries and switches: nothing applies in between.
	applyMu sync.Mutex
	// gen counts restores: a rebuild begun before one is void.
	gen atomic.Uint64
	// epoch counts restores and rebuild switches (Commit.Epoch).
	epoch atomic.Uint64
	// onCommit, guarded by applyMu, is told of each batch Apply commits.
	onCommit CommitHook
	// answers are the rows this server's proposals are answered with (answer.go).
	answers answers
	mu      struct {
		sync.Mutex
		// stale must be rebuilt before the first Apply.
		stale []projections.Stale
		// pending are operators' rebuilds a stop interrupted.
		pending []string
		// observer receives the progress of rebuilds (a Rebuilder's).
		observer func(RebuildProgress)
	}
}

var _ raftlog.Applier = (*FSM)(nil)

// Config configures an FSM.
type Config struct {
	// Projections are applied in this order; required.
	Projections []projections.Projection
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the FSM metrics; nil registers none.
	Registerer prometheus.Registerer
	// Clock times each batch for the ordo_fsm_batch_apply_seconds metric,
	// and nothing else (apply itself uses the leader time in each entry);
	// nil leaves the metric empty.
	Clock clock.Clock
	// AllowStale lets New open a store whose projections are stale
	// (written by another version of a projection, or missing; see Stale):
	// Stale lists them, Apply refuses to run until a Rebuilder has rebuilt
	// them (RebuildStale), and a raft snapshot restored with stale
	// projections is rebuilt before Restore returns. Unset, New and
	// Restore refuse such a store with projections.ErrRebuildNeeded.
	AllowStale bool
	// Version names this build (the agent's Version) in the store's record
	// of the newest ordo that wrote it, and in the errors refusing a store
	// or snapshot a newer ordo wrote (compat.go); default "(unnamed build)".
	Version string
	// EventTypes is this build's event registry, recorded in the store and
	// checked against what it records; nil is events.Types(). Tests set
	// it to play an older build.
	EventTypes []events.Type
}

// New returns an FSM over store, resuming at the applied index it holds.
func New(store *kv.Store, cfg Config) (*FSM, error) {
	if len(cfg.Projections) == 0 {
		return nil, errors.New("projections: FSM needs at least one projection")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	f := &FSM{store: store, projs: cfg.Projections, notify: projections.NewNotifier(), log: cfg.Logger, clock: cfg.Clock, allowStale: cfg.AllowStale}
	f.metrics = newFSMMetrics(cfg.Registerer, store)
	f.compat = newCompat(cfg)
	if err := f.load(); err != nil {
		return nil, err
	}
	return f, nil
}

// load reads the store's state: it discards a shadow keyspace an earlier
// ordo left behind (kv.Open deletes scratch stores a stop left),
// finds stale projections and interrupted rebuilds, and resumes at the
// stored applied index.
func (f *FSM) load() error {
	if err := discardShadow(f.store); err != nil {
		return err
	}
	claim, err := f.checkClaim() // compat.go: refuse a newer ordo's store
	if err != nil {
		return err
	}
	b := f.store.Batch()
	stale, err := projections.StaleProjections(projections.NewView(b), f.projs)
	if err != nil {
		b.Close()
		return err
	}
	if len(stale) > 0 && !f.allowStale {
		b.Close()
		return staleError(stale)
	}
	pending, err := pendingRebuilds(b)
	if err != nil {
		b.Close()
		return err
	}
	known := map[string]bool{}
	for _, p := range f.projs {
		known[p.Name()] = true
	}
	var keep []string
	for _, name := range pending {
		if !known[name] {
			if err := b.Delete(layout.MarkerKey(name)); err != nil {
				b.Close()
				return err
			}
			continue
		}
		keep = append(keep, name)
	}
	idx, err := projections.NewView(b).AppliedIndex()
	if err != nil {
		b.Close()
		return err
	}
	restored, err := projections.NewView(b).RestoredIndex()
	if err != nil {
		b.Close()
		return err
	}
	if err := f.writeClaim(claim); err != nil {
		b.Close()
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	if f.counters.length, err = archive.Len(f.store); err != nil {
		return err
	}
	if f.counters.last, err = archive.Last(f.store); err != nil {
		return err
	}
	f.mu.Lock()
	f.mu.stale, f.mu.pending = stale, keep
	f.mu.Unlock()
	f.applied.Store(idx)
	f.restored.Store(restored)
	f.notify.Publish(idx, nil, true)
	return nil
}

// RestoredAt returns the raft index of the last operator restore
// (RestorePayload) the store holds, 0 when none: the state before it is
// the restored one, so whatever a server kept of its states before that
// index (time travel's versions) describes a history that is no longer
// the archive's.
func (f *FSM) RestoredAt() uint64 { return f.restored.Load() }

// Stale returns the projections that must be rebuilt before the FSM
// applies anything (see Config.AllowStale).
func (f *FSM) Stale() []projections.Stale {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]projections.Stale(nil), f.mu.stale...)
}

// Projections returns the projections the FSM maintains, in apply order.
func (f *FSM) Projections() []projections.Projection {
	return append([]projections.Projection(nil), f.projs...)
}

// Notifier returns the notifier woken after each applied entry.
func (f *FSM) Notifier() *projections.Notifier { return f.notify }

// Applied returns the last applied index. It moves just after the batch
// that applied the entry commits: a reader of the store may see an entry
// for a moment before Applied says it was applied, never after.
func (f *FSM) Applied() uint64 { return f.applied.Load() }

// MaxApply returns the longest time one raft batch took to apply (commit
// included) since the last call, and starts a new window; 0 without a
// Clock (Config.Clock). Benchmarks read it to show that no apply
// starves heartbeats or leadership.
func (f *FSM) MaxApply() time.Duration { return time.Duration(f.metrics.maxNanos.Swap(0)) }

// MaxEntryApply returns the longest time one entry of a raft batch took
// to apply (its batch's commit not included) since the last call, and
// starts a new window; 0 without a Clock. A batch's apply is the sum of
// its entries' and its commit: this tells the work of one command (an
// eval-delete page) from the batching of many.
func (f *FSM) MaxEntryApply() time.Duration {
	return time.Duration(f.metrics.maxEntryNanos.Swap(0))
}

// Store returns the state store, for readers.
func (f *FSM) Store() *kv.Store { return f.store }

// Close unregisters the FSM's metrics.
func (f *FSM) Close() { f.metrics.unregister(); f.compat.unregister() }

// Apply implements raftlog.Applier. The entries of one raft batch commit in
// one Pebble batch, so each entry's events, projection rows and the applied
// index land together (a crash leaves the projections at a whole index, the
// start of the batch). A storage or projection failure cannot be recorded
// deterministically, so it stops the server rather than diverge.
func (f *FSM) Apply(logs []raftlog.Log) []any {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if h := f.Halt(); h != nil {
		return haltResults(logs, h) // halt.go: nothing applies after a halt
	}
	if stale := f.Stale(); len(stale) > 0 && len(logs) > 0 {
		f.fail(logs[0].Index, staleError(stale))
	}
	timer := f.timeBatch(logs) // timing.go: the metrics, without a clock nothing
	defer timer.done()
	out := make([]any, len(logs))
	b := f.store.Batch()
	ctr := f.counters
	var last uint64
	var marks []EntryMark
	changed := map[string]struct{}{}
	for i, l := range logs {
		if l.Index <= f.applied.Load() || l.Index <= last {
			out[i] = Result{Index: l.Index, Duplicate: true}
			continue
		}
		timer.startEntry()
		res, tables, err := applyEntry(b, l, f.projs, &ctr, f.answers.wanted)
		timer.endEntry(b, l.Index, err)
		if err != nil && f.haltOn(l.Index, err) { // halt.go: commit what came before, apply nothing after
			copy(out[i:], haltResults(logs[i:], f.Halt()))
			break
		}
		if err != nil {
			b.Close()
			f.fail(l.Index, err)
		}
		if f.onCommit != nil {
			marks = append(marks, EntryMark{Index: l.Index, Ops: b.Count()})
		}
		for _, t := range tables {
			changed[t] = struct{}{}
		}
		f.logRejections(res)
		out[i] = res
		last = l.Index
	}
	if last == 0 {
		b.Close()
		return out
	}
	if err := b.Set(layout.AppliedKey, kv.Uint64Value(last)); err != nil {
		b.Close()
		f.fail(last, err)
	}
	if err := archive.SetCounters(b, ctr.length, ctr.last); err != nil {
		b.Close()
		f.fail(last, err)
	}
	var repr []byte
	if f.onCommit != nil {
		repr = b.Repr()
	}
	if err := timer.commit(b); err != nil {
		f.fail(last, err)
	}
	if f.onCommit != nil {
		f.onCommit(Commit{From: f.applied.Load(), To: last, Repr: repr, Marks: marks, Epoch: f.epoch.Load()})
	}
	f.counters = ctr
	f.applied.Store(last)
	f.metrics.entries.Add(float64(len(logs)))
	tables := make([]string, 0, len(changed))
	for t := range changed {
		tables = append(tables, t)
	}
	f.notify.Publish(last, tables, false)
	return out
}

func (f *FSM) fail(index uint64, err error) {
	f.log.Error("fsm apply failed", "index", index, "err", err)
	panic(fmt.Sprintf("ordo: fsm apply %d: %v", index, err))
}

// archiveCounters are the archive's length and newest index, kept in
// memory by the FSM and written once per batch.
type archiveCounters struct {
	length, last uint64
}

// logRejections counts and logs the rejections res holds: the entry's, or
// its grouped commands'.
func (f *FSM) logRejections(res Result) {
	if res.Err != nil {
		f.metrics.rejections.Inc()
		f.log.Info("entry rejected", "index", res.Index, "err", res.Err)
	}
	for i, r := range res.Group {
		if r.Err != nil {
			f.metrics.rejections.Inc()
			f.log.Info("grouped command rejected", "index", res.Index, "position", i, "err", r.Err)
		}
	}
}
