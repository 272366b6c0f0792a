package kv

// loaderBatchBytes is a Loader's batch size when none is given.
const loaderBatchBytes = 4 << 20

// Loader writes many keys into a store through write-only batches of
// about limit bytes, each committed without sync as it fills: for loading
// a store that a crash would have loaded again from its source (a
// replay's scratch store), not for state that must survive one. Set
// copies the key and the value.
type Loader struct {
	s     *Store
	b     *WriteBatch
	limit int
}

// Loader returns a Loader into s committing every limit bytes (0: 4 MiB).
func (s *Store) Loader(limit int) *Loader {
	if limit <= 0 {
		limit = loaderBatchBytes
	}
	return &Loader{s: s, b: s.WriteBatch(), limit: limit}
}

// Set writes value at key, committing the open batch once it holds
// limit bytes.
func (l *Loader) Set(key, value []byte) error {
	if err := l.b.Set(key, value); err != nil {
		return err
	}
	if l.b.Len() < l.limit {
		return nil
	}
	err := l.b.Commit(false) // releases the batch
	l.b = l.s.WriteBatch()
	return err
}

// Commit commits what the open batch holds.
func (l *Loader) Commit() error { return l.b.Commit(false) }

// Close discards what was not committed; after Commit it does nothing.
func (l *Loader) Close() { l.b.Close() }
