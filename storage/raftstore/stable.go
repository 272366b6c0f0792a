package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
)

// ErrKeyNotFound is returned by Get and GetUint64 for a missing stable key.
// Its text is exactly "not found", without the usual package prefix, because
// hashicorp/raft detects a missing key by comparing err.Error() to it.
var ErrKeyNotFound = errors.New("not found")

// Set implements raft.StableStore: it stores val at key with a synced write.
func (s *Store) Set(key []byte, val []byte) error {
	if err := s.db.Set(stableKey(key), val, s.wo); err != nil {
		return fmt.Errorf("raftstore: set %q: %w", key, err)
	}
	return nil
}

// Get implements raft.StableStore: it returns a copy of the value at key, or
// ErrKeyNotFound (unwrapped, text "not found") if there is none.
func (s *Store) Get(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(stableKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrKeyNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("raftstore: get %q: %w", key, err)
	}
	out := make([]byte, len(v))
	copy(out, v)
	if err := closer.Close(); err != nil {
		return nil, fmt.Errorf("raftstore: get %q: %w", key, err)
	}
	return out, nil
}

// SetUint64 implements raft.StableStore: it stores val at key as 8 bytes
// big-endian with a synced write.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 implements raft.StableStore: it returns the value at key, or 0
// and ErrKeyNotFound (unwrapped, text "not found") if there is none.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raftstore: get uint64 %q: value is %d bytes, want 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
