package raftstore

import (
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/raft"
)

var (
	_ raft.LogStore    = (*Store)(nil)
	_ raft.StableStore = (*Store)(nil)
)

// Store is a Pebble-backed raft.LogStore and raft.StableStore.
type Store struct {
	db *pebble.DB
	wo *pebble.WriteOptions

	// writeMu serialises writes to log keys, so that the index cache is
	// updated in commit order.
	writeMu sync.Mutex

	mu struct {
		sync.Mutex
		// first and last are the smallest and largest stored log index,
		// both 0 when there is none.
		first, last uint64
	}
}

// Open opens the Store kept in dir, creating it if dir is empty or missing.
func Open(dir string, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := &pebble.Options{Logger: quietLogger{}}
	if cfg.CacheBytes > 0 {
		c := pebble.NewCache(cfg.CacheBytes)
		defer c.Unref()
		opts.Cache = c
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("raftstore: open %s: %w", dir, err)
	}
	s := &Store{db: db, wo: pebble.Sync}
	if cfg.NoSync {
		s.wo = pebble.NoSync
	}
	first, last, err := s.readBounds()
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("raftstore: open %s: %w", dir, err)
	}
	s.mu.first, s.mu.last = first, last
	return s, nil
}

// Close closes the Store. It must be the last call on it.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("raftstore: close: %w", err)
	}
	return nil
}

// readBounds reads the smallest and largest stored log index from Pebble,
// both 0 if there is none.
func (s *Store) readBounds() (first, last uint64, err error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: logLower, UpperBound: logUpper})
	if err != nil {
		return 0, 0, fmt.Errorf("read log bounds: %w", err)
	}
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("read log bounds: %w", cerr)
		}
	}()
	if !it.First() {
		if err := it.Error(); err != nil {
			return 0, 0, fmt.Errorf("read log bounds: %w", err)
		}
		return 0, 0, nil
	}
	first, ok := logKeyIndex(it.Key())
	if !ok {
		return 0, 0, fmt.Errorf("read log bounds: %w: bad key %x", errCorrupt, it.Key())
	}
	if !it.Last() {
		return 0, 0, fmt.Errorf("read log bounds: no last key: %w", it.Error())
	}
	last, ok = logKeyIndex(it.Key())
	if !ok {
		return 0, 0, fmt.Errorf("read log bounds: %w: bad key %x", errCorrupt, it.Key())
	}
	return first, last, nil
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
