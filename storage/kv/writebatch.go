package kv

import (
	"fmt"

	"github.com/cockroachdb/pebble"
)

// WriteBatch is a write-only batch that can also delete key ranges: what a
// caller needs to replace a whole key range atomically (a projection
// rebuild's switch deletes the live tables and moves the rebuilt rows in
// one batch). Operations apply in the order they were added, so a key Set
// after a DeleteRange covering it survives. It cannot read: use a Batch
// for writes that read their own writes.
type WriteBatch struct {
	b *pebble.Batch
	// released: Commit or Close gave b back to Pebble's pool, where
	// another caller may already hold it.
	released bool
}

// WriteBatch returns a new write-only batch.
func (s *Store) WriteBatch() *WriteBatch { return &WriteBatch{b: s.db.NewBatch()} }

// Set writes value at key.
func (w *WriteBatch) Set(key, value []byte) error { return w.b.Set(key, value, nil) }

// Delete removes key.
func (w *WriteBatch) Delete(key []byte) error { return w.b.Delete(key, nil) }

// DeleteRange removes every key in [lower, upper) written before it.
func (w *WriteBatch) DeleteRange(lower, upper []byte) error {
	return w.b.DeleteRange(lower, upper, nil)
}

// Repr returns a copy of the batch's writes in Pebble's batch encoding.
func (w *WriteBatch) Repr() []byte { return append([]byte(nil), w.b.Repr()...) }

// Len returns the batch's encoded size in bytes.
func (w *WriteBatch) Len() int { return w.b.Len() }

// Commit applies the batch atomically, durably when sync is set (whatever
// the store's Config.Sync), and releases it.
func (w *WriteBatch) Commit(sync bool) error {
	defer w.Close()
	wo := pebble.NoSync
	if sync {
		wo = pebble.Sync
	}
	if err := w.b.Commit(wo); err != nil {
		return fmt.Errorf("commit write batch: %w", err)
	}
	return nil
}

// Close releases an uncommitted batch, discarding its writes; after Commit
// or Close it does nothing (so a deferred Close is safe beside a Commit).
func (w *WriteBatch) Close() error {
	if w.released {
		return nil
	}
	w.released = true
	return w.b.Close()
}

// DeleteRange removes every key in [lower, upper) in its own batch.
func (s *Store) DeleteRange(lower, upper []byte, sync bool) error {
	w := s.WriteBatch()
	if err := w.DeleteRange(lower, upper); err != nil {
		w.Close()
		return err
	}
	return w.Commit(sync)
}

// ApplyRepr commits, atomically and without sync, the writes a batch of
// another store encoded (Batch.Repr). The store takes ownership of repr.
func (s *Store) ApplyRepr(repr []byte) error {
	b := s.db.NewBatch()
	if err := b.SetRepr(repr); err != nil {
		b.Close()
		return fmt.Errorf("apply batch repr: %w", err)
	}
	defer b.Close()
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("apply batch repr: %w", err)
	}
	return nil
}
