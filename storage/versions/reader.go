package versions

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/ordoplane/ordo/storage/kv"
)

// Reader reads the rows as they stood once one index was applied.
type Reader struct {
	db   *pebble.DB
	at   uint64
	skip skip // a fill's versions, not to be seen yet
}

var _ kv.Reader = (*Reader)(nil)

// At returns a reader of the rows at index, which a span of tag must
// cover (else ErrNotCovered).
func (s *Store) At(index uint64, tag string) (*Reader, error) {
	if !s.Covers(index, tag) {
		return nil, fmt.Errorf("%w: %d (%s)", ErrNotCovered, index, tag)
	}
	return &Reader{db: s.db, at: index, skip: s.skipped()}, nil
}

// Index returns the index the reader reads at.
func (r *Reader) Index() uint64 { return r.at }

// Get returns a copy of key's value at the reader's index, or
// kv.ErrNotFound.
func (r *Reader) Get(key []byte) ([]byte, error) {
	prefix := keyPrefix(key)
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: kv.PrefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	if !it.SeekGE(versionKey(key, r.at)) {
		return nil, notFound(it)
	}
	if _, index, err := parseKey(it.Key()); err != nil {
		return nil, err
	} else if r.skip.has(index) && !it.SeekGE(versionKey(key, r.skip.lo-1)) {
		return nil, notFound(it)
	}
	v, deleted, err := decodeValue(it.Value())
	if err != nil {
		return nil, err
	}
	if deleted {
		return nil, kv.ErrNotFound
	}
	return bytes.Clone(v), nil
}

func notFound(it *pebble.Iterator) error {
	if err := it.Error(); err != nil {
		return err
	}
	return kv.ErrNotFound
}

// Scan calls fn for each key in [lower, upper) present at the reader's
// index, in key order (reverse order when reverse is set), until fn returns
// an error or kv.ErrStop.
func (r *Reader) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	opts := &pebble.IterOptions{LowerBound: boundKey(lower), UpperBound: kv.PrefixEnd(rowPrefix)}
	if upper != nil {
		opts.UpperBound = boundKey(upper)
	}
	it, err := r.db.NewIter(opts)
	if err != nil {
		return err
	}
	defer it.Close()
	c := &cursor{it: it, at: r.at, skip: r.skip}
	if reverse {
		err = c.backward(fn)
	} else {
		err = c.forward(fn)
	}
	if errors.Is(err, kv.ErrStop) {
		return nil
	}
	if err != nil {
		return err
	}
	return it.Error()
}

// cursor walks the versions of keys, yielding each key's newest version at
// or below at that is not a deletion.
type cursor struct {
	it      *pebble.Iterator
	at      uint64
	skip    skip // versions not to be seen (a fill's)
	started bool
	valid   bool
}

// next returns the next key present at the cursor's index and its value,
// from the iterator's start; ok is false at the end.
func (c *cursor) next() (key, value []byte, ok bool, err error) {
	if !c.started {
		c.started, c.valid = true, c.it.First()
	}
	for c.valid {
		key, index, err := parseKey(c.it.Key())
		if err != nil {
			return nil, nil, false, err
		}
		prefix := keyPrefix(key)
		if index > c.at || c.skip.has(index) {
			// Newer than wanted, or a fill's: seek this key's newest
			// version at or below at, and below the fill.
			if c.valid = c.seekOlder(key, index); !c.valid {
				break
			}
			if !bytes.HasPrefix(c.it.Key(), prefix) {
				continue // no version that old: the iterator is on the next key
			}
		}
		v, deleted, err := decodeValue(c.it.Value())
		if err != nil {
			return nil, nil, false, err
		}
		v = bytes.Clone(v)
		c.valid = c.pastKey(prefix)
		if !deleted {
			return key, v, true, nil
		}
	}
	return nil, nil, false, c.it.Error()
}

// seekOlder moves the iterator, on key's version at index, to key's newest
// version at or below the cursor's index that no fill hides (or past
// key's versions).
func (c *cursor) seekOlder(key []byte, index uint64) bool {
	target := c.at
	if c.skip.has(min(index, c.at)) {
		target = c.skip.lo - 1
	}
	if !c.it.SeekGE(versionKey(key, target)) {
		return false
	}
	if _, i, err := parseKey(c.it.Key()); err == nil && c.skip.has(i) && bytes.HasPrefix(c.it.Key(), keyPrefix(key)) {
		return c.it.SeekGE(versionKey(key, c.skip.lo-1))
	}
	return true
}

// forward yields the keys from the iterator's start.
func (c *cursor) forward(fn func(k, v []byte) error) error {
	for {
		k, v, ok, err := c.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
}

// pastKey moves the iterator past the versions of the key with prefix:
// a few steps, then a seek.
func (c *cursor) pastKey(prefix []byte) bool {
	for range 3 {
		if !c.it.Next() {
			return false
		}
		if !bytes.HasPrefix(c.it.Key(), prefix) {
			return true
		}
	}
	return c.it.SeekGE(kv.PrefixEnd(prefix))
}

// backward yields the keys from the iterator's end, in reverse order.
func (c *cursor) backward(fn func(k, v []byte) error) error {
	valid := c.it.Last()
	for valid {
		key, _, err := parseKey(c.it.Key())
		if err != nil {
			return err
		}
		prefix := keyPrefix(key)
		if c.seekOlder(key, ^uint64(0)) && bytes.HasPrefix(c.it.Key(), prefix) {
			v, deleted, err := decodeValue(c.it.Value())
			if err != nil {
				return err
			}
			if !deleted {
				if err := fn(key, bytes.Clone(v)); err != nil {
					return err
				}
			}
		}
		valid = c.it.SeekLT(prefix)
	}
	return nil
}
