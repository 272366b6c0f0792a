package raftstore

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/raft"
)

// FirstIndex implements raft.LogStore: it returns the smallest stored index,
// or 0 if there is none.
func (s *Store) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.first, nil
}

// LastIndex implements raft.LogStore: it returns the largest stored index, or
// 0 if there is none.
func (s *Store) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.last, nil
}

// GetLog implements raft.LogStore: it overwrites *log with the entry at index,
// or returns exactly raft.ErrLogNotFound if there is none.
func (s *Store) GetLog(index uint64, log *raft.Log) error {
	var key [logKeyLen]byte
	putLogKey(key[:], index)
	v, closer, err := s.db.Get(key[:])
	if errors.Is(err, pebble.ErrNotFound) {
		return raft.ErrLogNotFound // bare: raft compares with ==
	}
	if err != nil {
		return fmt.Errorf("raftstore: get log %d: %w", index, err)
	}
	err = decodeLog(index, v, log)
	cerr := closer.Close()
	if err != nil {
		return fmt.Errorf("raftstore: get log %d: %w", index, err)
	}
	if cerr != nil {
		return fmt.Errorf("raftstore: get log %d: %w", index, cerr)
	}
	return nil
}

// StoreLog implements raft.LogStore: it stores one entry, replacing any
// entry at its index.
func (s *Store) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// StoreLogs implements raft.LogStore: it stores the entries, replacing any at
// the same indexes, in one synced batch. Indexes need not be contiguous.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	size := 0
	lo, hi := logs[0].Index, logs[0].Index
	for _, l := range logs {
		// Each record: kind byte, key and value lengths (≤ 5 bytes each).
		size += 1 + 5 + logKeyLen + 5 + encodedLen(l)
		lo, hi = min(lo, l.Index), max(hi, l.Index)
	}
	b := s.db.NewBatchWithSize(size)
	defer b.Close()
	for _, l := range logs {
		op := b.SetDeferred(logKeyLen, encodedLen(l))
		putLogKey(op.Key, l.Index)
		encodeLog(op.Value, l)
		if err := op.Finish(); err != nil {
			return fmt.Errorf("raftstore: store logs %d-%d: %w", lo, hi, err)
		}
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := b.Commit(s.wo); err != nil {
		return fmt.Errorf("raftstore: store logs %d-%d: %w", lo, hi, err)
	}
	s.mu.Lock()
	if s.mu.first == 0 || lo < s.mu.first {
		s.mu.first = lo
	}
	s.mu.last = max(s.mu.last, hi)
	s.mu.Unlock()
	return nil
}

// DeleteRange implements raft.LogStore: it deletes the entries with indexes
// in [min, max], inclusive, with one synced range deletion. It serves both
// log compaction (a prefix) and conflict truncation (a suffix).
func (s *Store) DeleteRange(min, max uint64) error {
	if min > max {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(appendLogKey(nil, min), logEndKey(max), nil); err != nil {
		return fmt.Errorf("raftstore: delete logs %d-%d: %w", min, max, err)
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	first, last := s.mu.first, s.mu.last
	if min <= first && max >= first {
		// A compaction: FirstIndex moves past the range before its entries
		// go, so a reader that finds an entry gone also finds FirstIndex
		// past it (raft's replication relies on it).
		s.mu.first = max + 1
	}
	s.mu.Unlock()
	if err := b.Commit(s.wo); err != nil {
		s.mu.Lock()
		s.mu.first = first
		s.mu.Unlock()
		return fmt.Errorf("raftstore: delete logs %d-%d: %w", min, max, err)
	}
	if max < first || min > last {
		return nil // nothing stored in range; bounds unchanged
	}
	// Indexes may have gaps, so the new bounds are read back, not computed.
	// Holding writeMu, nothing else changes them meanwhile.
	first, last, err := s.readBounds()
	if err != nil {
		return fmt.Errorf("raftstore: delete logs %d-%d: %w", min, max, err)
	}
	s.mu.Lock()
	s.mu.first, s.mu.last = first, last
	s.mu.Unlock()
	return nil
}
