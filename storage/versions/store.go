package versions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/storage/kv"
)

// spansKey holds the store's spans.
var spansKey = []byte("m/spans")

// ErrGap is an Append whose From is not the end of the newest span, or
// whose tag differs from it: the store must be seeded again (Seed).
var ErrGap = errors.New("versions: batch does not follow the newest span")

// ErrNotCovered is a read at an index no span of the current tag covers.
var ErrNotCovered = errors.New("versions: index not covered")

// cacheBytes is the block cache, besides the memtables' share.
const cacheBytes = 64 << 20

// The LSM's shape. Every key written is new (a row key and the index that
// wrote it), so nothing is overwritten in a memtable and the store's only
// write cost after the insert is flushing and compacting. Large memtables
// and a deep level 0 let many flushes merge into the base level at once,
// and a large base level keeps the tree shallow: deleting 1,000,000 evals
// on a 3-server cluster compacted 41-83 MB a server instead of 510-540 MB
// (Pebble's defaults: 4 L0 files, 64 MiB base) with 32 MiB memtables, and
// the process's CPU per eval fell from 243 to 196 µs (docs/gc.md). Reads
// seek a few more level 0 files.
const (
	memTableBytes = 128 << 20
	l0Files       = 8
	lBaseBytes    = 256 << 20
)

// Span is a run of indexes at which the store holds every row: seeded at
// From, then every batch through To.
type Span struct {
	From uint64 `msgpack:"f"`
	To   uint64 `msgpack:"t"`
	// Tag names what wrote the rows (the projection versions): a span of
	// another tag is not served.
	Tag string `msgpack:"g"`
}

// Store keeps every version of the rows of a source store: each write of
// a key by the entry at index i as a version of the key at i. A read at
// any covered index is a seek per key, whatever the distance to the
// source's head. One goroutine writes (Append, Seed, Prune); reads may
// run concurrently.
type Store struct {
	db *pebble.DB
	// wmu serialises what changes the spans or the fill (Append, Seed,
	// Prune and the fill's Begin/End), which may run on two goroutines: a
	// writer of the head and a filler of the past. Take it before mu.
	wmu sync.Mutex
	mu  sync.Mutex
	// spans are ascending and disjoint.
	spans []Span
	// fill is the range being filled (BeginFill), nil when none.
	fill *Fill
}

// Open opens (creating if needed) the store in dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("versions: %w", err)
	}
	// No write-ahead log: a crash loses the newest memtable, but Pebble
	// flushes memtables in order, so what survives is the store as some
	// earlier batch left it, its spans included (a start after that seeds
	// again); and the versions are half the FSM's write cost again.
	opts := &pebble.Options{MemTableSize: memTableBytes, Logger: kv.PebbleLogger, DisableWAL: true,
		L0CompactionThreshold: l0Files, L0StopWritesThreshold: 4 * l0Files, LBaseMaxBytes: lBaseBytes}
	opts.EnsureDefaults()
	defer kv.SetCache(opts, cacheBytes)()
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("versions: open %s: %w", dir, err)
	}
	s := &Store{db: db}
	v, closer, err := db.Get(spansKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		db.Close()
		return nil, fmt.Errorf("versions: read spans: %w", err)
	default:
		err = msgpack.Unmarshal(v, &s.spans)
		closer.Close()
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("versions: decode spans: %w", err)
		}
	}
	if s.fill, err = loadFill(db); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Flush writes the memtables to tables: what a crash would otherwise lose
// (the store keeps no write-ahead log).
func (s *Store) Flush() error { return s.db.Flush() }

// Close flushes and closes the store.
func (s *Store) Close() error {
	if err := s.db.Flush(); err != nil {
		s.db.Close()
		return fmt.Errorf("versions: flush: %w", err)
	}
	return s.db.Close()
}

// Spans returns the spans, ascending.
func (s *Store) Spans() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.spans)
}

// Last returns the newest span's end and tag (0, "" when empty).
func (s *Store) Last() (uint64, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.spans) == 0 {
		return 0, ""
	}
	l := s.spans[len(s.spans)-1]
	return l.To, l.Tag
}

// Covers reports whether a span of tag covers index.
func (s *Store) Covers(index uint64, tag string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return covers(s.spans, index, tag)
}

func covers(spans []Span, index uint64, tag string) bool {
	for _, sp := range spans {
		if sp.Tag == tag && sp.From <= index && index <= sp.To {
			return true
		}
	}
	return false
}

// Bytes returns the disk space of the store's files.
func (s *Store) Bytes() int64 {
	m := s.db.Metrics()
	return int64(m.DiskSpaceUsage())
}

// commitSpans writes spans into b, commits it and makes them current.
func (s *Store) commitSpans(b *pebble.Batch, spans []Span) error {
	return s.commitMeta(b, spans, false)
}

// commitMeta writes spans into b (and the end of the fill under way, with
// endFill), commits it and makes them current.
func (s *Store) commitMeta(b *pebble.Batch, spans []Span, endFill bool) error {
	v, err := msgpack.Marshal(spans)
	if err != nil {
		return err
	}
	if err := b.Set(spansKey, v, nil); err != nil {
		return err
	}
	if endFill {
		if err := setFill(b, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("versions: commit: %w", err)
	}
	s.mu.Lock()
	s.spans = spans
	if endFill {
		s.fill = nil
	}
	s.mu.Unlock()
	return nil
}

// Dir is where a data directory keeps its versions store.
func Dir(dataDir string) string { return filepath.Join(dataDir, "versions") }
