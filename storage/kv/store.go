package kv

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"

	"github.com/ordoplane/ordo/clock"
)

// ErrNotFound is returned by Get for a missing key.
var ErrNotFound = errors.New("ordo: key not found")

// Reader reads keys.
type Reader interface {
	// Get returns a copy of the value stored at key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// Scan calls fn for each key in [lower, upper) in order (in reverse
	// order when reverse is set) until fn returns an error or ErrStop.
	Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error
}

// Writer reads and writes keys. Set and Delete copy what they keep of
// their arguments: a caller may reuse its buffers once they return.
type Writer interface {
	Reader
	Set(key, value []byte) error
	Delete(key []byte) error
}

// ErrStop ends a Scan early without error.
var ErrStop = errors.New("ordo: stop scan")

// Config configures a Store.
type Config struct {
	// Sync makes every committed batch durable before Commit returns.
	// Default false: the state store is rebuilt from the synced raft log.
	Sync bool
	// CacheBytes is the block cache size in bytes, besides the memory of
	// the memtables. Default 64 MiB.
	CacheBytes int64
	// DisableWAL writes no write-ahead log: what is not yet flushed to a
	// table is lost at a crash or Close. For scratch stores thrown away
	// anyway (a time-travel backfill's replay, a rebuild's scratch).
	DisableWAL bool
	// Bulk shapes the LSM for a store written once, then read once (a
	// scratch store): level 0 takes many tables before they are compacted
	// and writes never stall for it.
	Bulk bool
	// DisableCompactions runs no compaction unless asked: for a store
	// opened only to be read briefly or flushed and closed (a checkpoint
	// being finished), where a compaction Pebble starts on open (it finds
	// level 0 over its threshold) would rewrite the copy for nothing, and
	// Close would wait for it.
	DisableCompactions bool
}

// DefaultConfig returns the default Config.
func DefaultConfig() Config { return Config{CacheBytes: 64 << 20} }

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.CacheBytes < 0 {
		return fmt.Errorf("kv: CacheBytes %d is negative", c.CacheBytes)
	}
	return nil
}

// walBytesPerSync is how much WAL Pebble writes before syncing it in the
// background (Options.WALBytesPerSync).
const walBytesPerSync = 1 << 20

// Store is a Pebble database.
type Store struct {
	db   *pebble.DB
	sync *pebble.WriteOptions
	dir  string
	opts *pebble.Options
	// gate holds readers back while Replace swaps many keys in two steps:
	// each read takes it shared while it fixes its view (a snapshot, an
	// iterator, a point read).
	gate sync.RWMutex
	// replaced, when set (tests), runs in Replace between the ingest and
	// the batch.
	replaced func() error
	stalls   *stalls
	// clock times write stalls and how long Replace holds readers back.
	clock clock.Clock
	// ingests counts the files Replace ingested; flushedIngests is how
	// many of them a flush since put in the LSM (see Checkpoint).
	ingests, flushedIngests atomic.Uint64
	// removeOnClose: a scratch store (OpenScratch), deleted when closed.
	removeOnClose bool
	// batchMaps keeps the maps of closed Batches (*batchMaps), emptied,
	// for the next: the FSM's batch of a plan holds thousands of keys,
	// and filling fresh maps (growing them step by step) was a sixth of
	// applying a plan.
	batchMaps sync.Pool
}

// bulkL0Tables is a Bulk store's L0CompactionThreshold: it compacts
// level 0 once it holds half as many sublevels.
const bulkL0Tables = 32

// bulkReadSampling is a Bulk store's ReadSamplingMultiplier: -1, no
// read sampling, hence no compaction for reads.
var bulkReadSampling int64 = -1

// formatVersion is the Pebble format a store is kept at.
const formatVersion = pebble.FormatFlushableIngest

// Open opens or creates the store in dir.
func Open(dir string, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := &pebble.Options{Logger: PebbleLogger}
	// Bloom filters make the many lookups of absent keys (new command ids,
	// new rows) cheap.
	opts.Levels = make([]pebble.LevelOptions, 7)
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	// Large memtables absorb the rows every entry rewrites (applied index,
	// table indexes, per-node usage) before they reach a table, which cuts
	// flush and compaction work several-fold under scheduling load.
	opts.MemTableSize = 64 << 20
	opts.L0CompactionThreshold = 4
	opts.MaxConcurrentCompactions = func() int { return 2 }
	// The state store commits without sync, so its WAL would otherwise
	// reach the disk only when the memtable rotates, where Pebble syncs
	// the old WAL (and the WAL directory) inside the commit that filled
	// it: tens of MiB of dirty pages written at once, stalling that
	// commit, and the FSM batch applying it, by 10-60 ms on an idle disk
	// (Batch.CommitStats' WALRotationDuration), longer on a busy one.
	// Writing the WAL out in the background every WALBytesPerSync leaves
	// the rotation less to sync (longest commit of a 100,000-eval delete
	// on one FSM: 12-53 ms against 57-63 ms without); the directory sync
	// remains.
	opts.WALBytesPerSync = walBytesPerSync
	opts.DisableWAL = cfg.DisableWAL
	opts.DisableAutomaticCompactions = cfg.DisableCompactions
	// At this format an ingest over keys the memtables hold (an online
	// rebuild's switch, Replace) is queued behind them instead of flushing
	// them first, which the switch would do with the FSM stopped. Opening
	// a store of an older format moves it to this one, for good: older
	// binaries of Pebble before it cannot open it then.
	opts.FormatMajorVersion = formatVersion
	clk := clock.System{}
	st := newStalls(clk)
	opts.EventListener = st.listener()
	if cfg.Bulk {
		// A rebuild's scratch store flushes tables that each span every
		// table of the projections being built, so every compaction out
		// of level 0 rewrites most of the store: compacting at 16
		// sublevels (Pebble's score is twice the sublevels over the
		// threshold) instead of 2 leaves a 1,000,000-event scheduling
		// history (14 flushes) uncompacted, read through its level-0
		// tables' bloom filters, and makes its online rebuild about 5%
		// faster (docs/operations.md). Nothing waits on the store's
		// writes, so they never stall.
		opts.L0CompactionThreshold = bulkL0Tables
		opts.L0StopWritesThreshold = math.MaxInt32
		// Nor is it compacted for its reads: the scan that copies it into
		// the switch's table files would otherwise sample enough reads of
		// overlapping level-0 tables to compact all of level 0 meanwhile
		// (2.1 s of a core for a 1,000,000-event history, into tables
		// nobody reads).
		opts.Experimental.ReadSamplingMultiplier = bulkReadSampling
		// Nor are its tables compressed: they live only as long as the
		// rebuild, in the page cache more than on disk, and every block
		// a flush writes is read back once by that scan, so snappy's
		// encoding and decoding were CPU spent for nothing. Its blocks
		// are 32 KiB, not 4: a flush and the scan handle an eighth as
		// many. Together, about 8% less CPU per event for a from-scratch
		// rebuild of a 1,000,000-event history, measured in alternating
		// runs on a machine drifting by as much (docs/operations.md).
		for i := range opts.Levels {
			opts.Levels[i].Compression = pebble.NoCompression
			opts.Levels[i].BlockSize = 32 << 10
		}
	}
	opts.EnsureDefaults()
	if cfg.CacheBytes > 0 {
		defer SetCache(opts, cfg.CacheBytes)()
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open pebble %s: %w", dir, err)
	}
	// Only once Pebble's lock is held: another process may own the store.
	if err := removeTableFiles(dir); err != nil {
		db.Close()
		return nil, fmt.Errorf("open pebble %s: %w", dir, err)
	}
	if err := removeScratch(dir); err != nil {
		db.Close()
		return nil, fmt.Errorf("open pebble %s: %w", dir, err)
	}
	wo := pebble.NoSync
	if cfg.Sync {
		wo = pebble.Sync
	}
	return &Store{db: db, sync: wo, dir: dir, opts: opts, stalls: st, clock: clk}, nil
}

// Close closes the store (and deletes it, for a scratch store).
func (s *Store) Close() error {
	err := s.db.Close()
	if s.removeOnClose {
		if rmErr := os.RemoveAll(s.dir); err == nil && rmErr != nil {
			err = fmt.Errorf("remove scratch store: %w", rmErr)
		}
	}
	return err
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// EstimateBytes estimates the bytes the store's tables hold in [lower,
// upper) (what its memtables hold is not counted): enough to share out
// work over key ranges.
func (s *Store) EstimateBytes(lower, upper []byte) (uint64, error) {
	n, err := s.db.EstimateDiskUsage(lower, upper)
	if err != nil {
		return 0, fmt.Errorf("estimate bytes: %w", err)
	}
	return n, nil
}

// Get implements Reader against the latest committed state.
func (s *Store) Get(key []byte) ([]byte, error) {
	s.gate.RLock()
	defer s.gate.RUnlock()
	return get(s.db, key)
}

// Scan implements Reader against the committed state when it starts.
func (s *Store) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	s.gate.RLock()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	s.gate.RUnlock()
	if err != nil {
		return err
	}
	return scan(it, reverse, fn)
}

// Flush makes every committed batch durable.
func (s *Store) Flush() error { return s.db.LogData(nil, pebble.Sync) }

// Batch returns a new indexed batch that reads its own writes over the latest state.
func (s *Store) Batch() *Batch {
	m, _ := s.batchMaps.Get().(*batchMaps)
	if m == nil {
		m = &batchMaps{own: map[string]ownWrite{}, read: map[string]ownWrite{}}
	}
	return &Batch{b: s.db.NewIndexedBatch(), db: s.db, wo: s.sync, store: s, batchMaps: m}
}

// batchMaps are a Batch's records of what it wrote and read.
type batchMaps struct {
	own  map[string]ownWrite
	read map[string]ownWrite
}

// maxPooledBatchKeys bounds the maps a Store keeps for its next Batch:
// emptying a map costs its size, and one grown by a rare huge batch
// (a projection's rebuild switch) is let go.
const maxPooledBatchKeys = 1 << 16

// release gives a closed Batch's maps back to its store, emptied.
func (b *Batch) release() {
	m := b.batchMaps
	b.batchMaps = nil
	if m == nil || len(m.own)+len(m.read) > maxPooledBatchKeys {
		return
	}
	clear(m.own)
	clear(m.read)
	b.store.batchMaps.Put(m)
}

// Snapshot returns a consistent read view; Close it when done.
func (s *Store) Snapshot() *Snapshot {
	s.gate.RLock()
	defer s.gate.RUnlock()
	return &Snapshot{s: s.db.NewSnapshot()}
}

// Batch is an indexed write batch. Point reads of keys the batch wrote are
// answered from memory and others from the database, which is cheaper than
// Pebble's merged batch read; scans use Pebble's batch index. The batch
// remembers what it read from the database (absent keys too), so a key read
// twice costs one lookup: the batch's owner must be the only writer while
// it is open, as the FSM is.
type Batch struct {
	b     *pebble.Batch
	db    *pebble.DB
	wo    *pebble.WriteOptions
	store *Store
	// own and read (batchMaps) are what the batch wrote and what it read
	// from the database; the store keeps them for its next batch once
	// this one is released.
	*batchMaps
	// released: Commit or Close gave b back to Pebble's pool.
	released bool
}

// ownWrite is a value the batch wrote, or a deletion.
type ownWrite struct {
	value   []byte
	deleted bool
}

var _ Writer = (*Batch)(nil)

// Get implements Reader, seeing the batch's own writes.
func (b *Batch) Get(key []byte) ([]byte, error) {
	if b.batchMaps == nil { // released: what it wrote is committed or dropped
		return get(b.db, key)
	}
	if w, ok := b.own[string(key)]; ok {
		if w.deleted {
			return nil, ErrNotFound
		}
		return append([]byte(nil), w.value...), nil
	}
	if r, ok := b.read[string(key)]; ok {
		if r.deleted {
			return nil, ErrNotFound
		}
		return append([]byte(nil), r.value...), nil
	}
	v, err := get(b.db, key)
	switch {
	case err == nil:
		b.read[string(key)] = ownWrite{value: append([]byte(nil), v...)}
	case errors.Is(err, ErrNotFound):
		b.read[string(key)] = ownWrite{deleted: true}
	}
	return v, err
}

// Scan implements Reader, seeing the batch's own writes.
func (b *Batch) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	it, err := b.b.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	return scan(it, reverse, fn)
}

// Set implements Writer.
func (b *Batch) Set(key, value []byte) error {
	return b.SetOwned(key, append([]byte(nil), value...))
}

// SetOwned is Set of a value the caller hands over and never changes
// again, which the batch keeps rather than copies (the projections'
// writes: a row encoded for this write, or an entry's shared index row
// value).
func (b *Batch) SetOwned(key, value []byte) error {
	b.own[string(key)] = ownWrite{value: value}
	return b.b.Set(key, value, nil)
}

// Delete implements Writer.
func (b *Batch) Delete(key []byte) error {
	b.own[string(key)] = ownWrite{deleted: true}
	return b.b.Delete(key, nil)
}

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return b.b.Empty() }

// Count returns how many writes the batch holds.
func (b *Batch) Count() uint32 { return b.b.Count() }

// Repr returns a copy of the batch's writes in Pebble's batch encoding,
// which Store.ApplyRepr commits to another store: a redo record of what
// this batch changes.
func (b *Batch) Repr() []byte { return append([]byte(nil), b.b.Repr()...) }

// Commit applies the batch atomically and releases it.
func (b *Batch) Commit() error {
	defer b.Close()
	if err := b.b.Commit(b.wo); err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	return nil
}

// Close releases an uncommitted batch, discarding its writes; after Commit
// or Close it does nothing.
func (b *Batch) Close() error {
	if b.released {
		return nil
	}
	b.released = true
	b.release()
	return b.b.Close()
}

// Snapshot is a consistent read view of a Store.
type Snapshot struct{ s *pebble.Snapshot }

var _ Reader = (*Snapshot)(nil)

// Get implements Reader.
func (s *Snapshot) Get(key []byte) ([]byte, error) { return get(s.s, key) }

// Scan implements Reader.
func (s *Snapshot) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	it, err := s.s.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	return scan(it, reverse, fn)
}

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.s.Close() }

type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func get(g getter, key []byte) ([]byte, error) {
	v, c, err := g.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", key, err)
	}
	out := append([]byte(nil), v...)
	return out, c.Close()
}

func scan(it *pebble.Iterator, reverse bool, fn func(k, v []byte) error) (err error) {
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	valid, next := it.First, it.Next
	if reverse {
		valid, next = it.Last, it.Prev
	}
	for ok := valid(); ok; ok = next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return it.Error()
}

// SetCache gives opts (defaults ensured) a block cache of blockBytes for
// blocks, plus the memtables' share: Pebble charges its memtables to the
// block cache (Cache.Reserve), so a cache no bigger than the memtables
// holds no block at all, and every read of a table re-reads its filter
// and index blocks from disk, a cost that grows with the table. Call the
// returned function once the database is open (or failed to).
func SetCache(opts *pebble.Options, blockBytes int64) (release func()) {
	c := pebble.NewCache(blockBytes + int64(opts.MemTableStopWritesThreshold)*int64(opts.MemTableSize))
	opts.Cache = c
	return c.Unref
}

// PebbleLogger drops Pebble's informational and error logging (what
// matters surfaces as errors) and panics on a fatal one.
var PebbleLogger pebble.Logger = quietLogger{}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
