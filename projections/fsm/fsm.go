package fsm

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmihailenco/msgpack/v5"

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
	clock    func() time.Time
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
	Clock func() time.Time
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

// Commit is one batch FSM.Apply committed, as its CommitHook is told of
// it.
type Commit struct {
	// From and To are the applied index before and after the batch.
	From, To uint64
	// Repr is the batch's writes in Pebble's encoding (kv.Store.ApplyRepr),
	// a copy the hook keeps. Applied to a store at From, they bring it to
	// To, exactly as the FSM did: a redo record.
	Repr []byte
	// Marks say which entry wrote which writes: the writes of Repr before
	// mark k's Ops (and at or after mark k-1's) are entry Marks[k].Index's.
	// The writes after the last mark (the applied index, the archive's
	// counters) are the batch's own.
	Marks []EntryMark
	// Epoch changes whenever the state is replaced outside Apply (a
	// snapshot restore, a projection rebuild's switch): a hook keeping a
	// copy of the state built from commits must then start it again.
	Epoch uint64
}

// EntryMark is where one applied entry's writes end in a Commit's Repr.
type EntryMark struct {
	// Index is the entry's raft index.
	Index uint64
	// Ops is how many writes the batch held once the entry was applied.
	Ops uint32
}

// CommitHook is told of each batch FSM.Apply commits, on the apply path
// (so it must not block). history/timetravel keeps every version of the
// rows they write, to read past states without re-running projections.
// A restore or a
// projection rebuild's switch writes outside Apply and is not reported;
// it moves the Epoch of the next Commit.
type CommitHook func(Commit)

// Epoch counts the times the state was replaced outside Apply (see
// Commit.Epoch).
func (f *FSM) Epoch() uint64 { return f.epoch.Load() }

// SetCommitHook sets the hook told of each batch Apply commits (nil: none).
func (f *FSM) SetCommitHook(h CommitHook) {
	f.applyMu.Lock()
	f.onCommit = h
	f.applyMu.Unlock()
}

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
		if res.Err != nil {
			f.metrics.rejections.Inc()
			f.log.Info("entry rejected", "index", l.Index, "err", res.Err)
		}
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

// commandRecord is what the FSM keeps per client idempotency key.
type commandRecord struct {
	Index  uint64 `msgpack:"i"`
	Reason string `msgpack:"r,omitempty"`
	Hash   string `msgpack:"h,omitempty"`
}

// result is the answer a retry of the recorded command gets.
func (rec commandRecord) result() Result {
	res := Result{Index: rec.Index, Duplicate: true}
	if rec.Reason != "" {
		res.Err = &RejectedError{Reason: rec.Reason}
	}
	return res
}

func keyReused(id string, index uint64) string {
	return fmt.Sprintf("idempotency key %q was used at index %d for a different request", id, index)
}

// rejection is what the FSM records for an entry that was not applied.
type rejection struct {
	CommandID    string              `msgpack:"cid"`
	Reason       string              `msgpack:"r"`
	Precondition events.Precondition `msgpack:"p"`
}

// applyEntry applies one entry into w and returns its result and the tables
// it changed. An error is a storage failure; an entry that cannot apply is a
// recorded rejection in the result.
// want names the rows to read back into the result for a command id (answer.go).
func applyEntry(w kv.Writer, l raftlog.Log, projs []projections.Projection, ctr *archiveCounters, want func(commandID string) []RowRef) (Result, []string, error) {
	res := Result{Index: l.Index}
	entry, err := events.DecodeEntry(l.Data)
	if err != nil {
		return reject(w, l.Index, nil, events.Precondition{}, err.Error())
	}
	if err := checkKnown(entry); err != nil {
		return res, nil, err // halt.go: written by a newer ordo; halts the FSM
	}
	if entry.Idempotent {
		if prev, ok, err := lookupCommand(w, entry.CommandID); err != nil {
			return res, nil, err
		} else if ok {
			if prev.Hash != entry.RequestHash {
				return reject(w, l.Index, nil, events.Precondition{}, keyReused(entry.CommandID, prev.Index))
			}
			return prev.result(), nil, nil
		}
	}
	tx := projections.NewTx(w, l.Index, entry.Time)
	for _, p := range entry.Preconditions {
		if reason := check(tx.View, p); reason != "" {
			return reject(w, l.Index, entry, p, reason)
		}
	}
	if reason, err := expand(tx.View, entry); err != nil {
		return res, nil, err
	} else if reason != "" {
		return reject(w, l.Index, entry, events.Precondition{}, reason)
	}
	entry.Stamp(l.Index)
	for i := range entry.Events {
		ev := &entry.Events[i]
		data, err := events.EncodeEvent(ev)
		if err != nil {
			return res, nil, err
		}
		if err := archive.Append(w, ev.Index, ev.Seq, data); err != nil {
			return res, nil, err
		}
		ctr.length++
		ctr.last = ev.Index
		events.Predecode(ev)
		for _, p := range projs {
			if err := p.Apply(tx, ev); err != nil {
				return res, nil, fmt.Errorf("projection %s on %s: %w", p.Name(), ev.Type, err)
			}
		}
	}
	tables, err := tx.Finish()
	if err != nil {
		return res, nil, err
	}
	if entry.Idempotent {
		if err := recordCommand(w, entry.CommandID, commandRecord{Index: l.Index, Hash: entry.RequestHash}); err != nil {
			return res, nil, err
		}
	}
	res.Time = entry.Time
	if refs := want(entry.CommandID); len(refs) > 0 {
		if res.Rows, err = readAnswer(tx, refs); err != nil {
			return res, nil, err
		}
	}
	return res, tables, nil
}

func reject(w kv.Writer, index uint64, entry *events.Entry, p events.Precondition, reason string) (Result, []string, error) {
	var cmdID string
	if entry != nil {
		cmdID = entry.CommandID
	}
	rec, err := msgpack.Marshal(&rejection{CommandID: cmdID, Reason: reason, Precondition: p})
	if err != nil {
		return Result{}, nil, err
	}
	if err := w.Set(layout.RejectionKey(index), rec); err != nil {
		return Result{}, nil, err
	}
	if entry != nil && entry.Idempotent {
		if err := recordCommand(w, cmdID, commandRecord{Index: index, Reason: reason, Hash: entry.RequestHash}); err != nil {
			return Result{}, nil, err
		}
	}
	return Result{Index: index, Err: &RejectedError{Precondition: p, Reason: reason}}, nil, nil
}

func lookupCommand(r kv.Reader, id string) (commandRecord, bool, error) {
	b, err := r.Get(layout.CommandKey(id))
	if errors.Is(err, kv.ErrNotFound) {
		return commandRecord{}, false, nil
	}
	if err != nil {
		return commandRecord{}, false, err
	}
	var rec commandRecord
	if err := msgpack.Unmarshal(b, &rec); err != nil {
		return commandRecord{}, false, fmt.Errorf("command record %s: %w", id, err)
	}
	return rec, true, nil
}

func recordCommand(w kv.Writer, id string, rec commandRecord) error {
	if id == "" {
		return nil
	}
	b, err := msgpack.Marshal(&rec)
	if err != nil {
		return err
	}
	return w.Set(layout.CommandKey(id), b)
}

// CommandIndex returns the index of the entry the command id was first
// recorded at, whatever its body; ok is false when id was never recorded.
func CommandIndex(v projections.View, id string) (uint64, bool, error) {
	rec, ok, err := lookupCommand(v.Reader(), id)
	return rec.Index, ok, err
}

// CommandResult returns the result recorded for idempotency key id, if a
// command with it was applied. A record of another request (hash differs)
// yields a *RejectedError saying the key was reused.
func CommandResult(v projections.View, id, hash string) (Result, bool, error) {
	rec, ok, err := lookupCommand(v.Reader(), id)
	if err != nil || !ok {
		return Result{}, ok, err
	}
	if rec.Hash != hash {
		return Result{Err: &RejectedError{Reason: keyReused(id, rec.Index)}}, true, nil
	}
	return rec.result(), true, nil
}

// check returns why p does not hold, or "" when it does.
func check(v projections.View, p events.Precondition) string {
	if c, ok := projections.RegisteredCheck(p.Op); ok {
		return c(v, p)
	}
	row, err := v.Get(p.Table, p.Key)
	exists := err == nil
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return err.Error()
	}
	switch p.Op {
	case events.Exists:
		if !exists {
			return "does not exist"
		}
	case events.Absent:
		if exists {
			return "already exists"
		}
	case events.ModifyIndex:
		var have uint64
		if exists {
			have = row.ModifyIndex
		}
		if have != p.Index {
			return fmt.Sprintf("modify index is %d, not %d", have, p.Index)
		}
	default:
		return fmt.Sprintf("unknown operation %q", p.Op)
	}
	return ""
}

// snapshotMagic starts every FSM snapshot, followed by the applied index.
const snapshotMagic = "ordo-fsm-1\n"

// Snapshot implements raftlog.Applier: it captures the whole state store
// (archive and projections) at the applied index.
func (f *FSM) Snapshot() (raftlog.Snapshot, error) {
	if h := f.Halt(); h != nil {
		return nil, h // a halted store is behind raft's applied index
	}
	return &fsmSnapshot{snap: f.store.Snapshot(), index: f.applied.Load()}, nil
}

type fsmSnapshot struct {
	snap  *kv.Snapshot
	index uint64
}

func (s *fsmSnapshot) Persist(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(snapshotMagic)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], s.index)
	bw.Write(b[:])
	if err := kv.Export(withoutLocal{s.snap}, bw); err != nil {
		return fmt.Errorf("persist snapshot at %d: %w", s.index, err)
	}
	return bw.Flush()
}

func (s *fsmSnapshot) Release() { s.snap.Close() }

// Restore implements raftlog.Applier. A snapshot no newer than the local
// state is skipped: the state store survives restarts and raft replays
// only what follows. A restore voids a rebuild in progress; projections
// the snapshot holds at another version are rebuilt before it returns
// (with Config.AllowStale). An operator's restore (RestorePayload)
// replaces the store the same way and records the payload's index as the
// applied index: the saved state then stands at the raft index raft
// installed it at.
func (f *FSM) Restore(r io.Reader) error {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if h := f.Halt(); h != nil {
		return h
	}
	br := bufio.NewReader(r)
	hdr := make([]byte, len(snapshotMagic)+8)
	_, err := io.ReadFull(br, hdr)
	magic := string(hdr[:len(snapshotMagic)])
	if err != nil || magic != snapshotMagic && magic != restoreMagic {
		return errors.New("restore: not an ordo FSM snapshot")
	}
	operator := magic == restoreMagic
	index := binary.BigEndian.Uint64(hdr[len(snapshotMagic):])
	if index <= f.applied.Load() {
		f.log.Info("snapshot skipped: state is newer", "snapshot_index", index, "applied", f.applied.Load(), "operator_restore", operator)
		_, err := io.Copy(io.Discard, br)
		return err
	}
	// The applied index lands last: a crash mid-import leaves it absent, so
	// the next start restores the snapshot again instead of trusting a
	// half-written store.
	f.gen.Add(1)
	f.epoch.Add(1)
	if err := f.store.Import(br, layout.AppliedKey); err != nil {
		return fmt.Errorf("restore at %d: %w", index, err)
	}
	if operator {
		w := f.store.WriteBatch()
		if err := errors.Join(w.Set(layout.RestoredKey, kv.Uint64Value(index)), w.Set(layout.AppliedKey, kv.Uint64Value(index))); err != nil {
			w.Close()
			return fmt.Errorf("restore at %d: %w", index, err)
		}
		if err := w.Commit(true); err != nil {
			return fmt.Errorf("restore at %d: %w", index, err)
		}
	}
	f.log.Info("restored snapshot", "index", index, "operator_restore", operator)
	if err := f.load(); err != nil {
		if errors.Is(err, ErrDowngrade) {
			return f.haltWith(index, err) // compat.go: a newer ordo's snapshot
		}
		return err
	}
	if stale := f.Stale(); len(stale) > 0 {
		f.log.Warn("restored snapshot holds stale projections: rebuilding them from the archive", "stale", fmt.Sprint(stale))
		return f.rebuildLocked(context.Background(), staleProjs(stale), f.observer())
	}
	return nil
}
