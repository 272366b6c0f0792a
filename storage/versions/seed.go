package versions

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble"

	"github.com/ordoplane/ordo/storage/kv"
)

// seedBatchBytes is how many bytes of versions a seed writes per batch.
const seedBatchBytes = 4 << 20

// SeedStats says what a Seed wrote.
type SeedStats struct {
	// Written counts the keys whose version at the seed's index was
	// written (changed, new or deleted since the store's view at it).
	Written int
	// Scanned counts the source's keys compared.
	Scanned int
}

// Seed starts a span at index at, tagged tag, holding src's keys under the
// prefixes keep (which must not overlap): src must read the source as it
// stood at at (a snapshot).
// It writes only the difference between src and the store's own view at
// at (the older spans' newest versions), as versions at at: a deletion for
// a key src lacks. Spans reaching at or past it are cut short first, so
// no covered read sees a half-written seed; a seed interrupted by a crash
// is simply done again. Append then extends the new span.
func (s *Store) Seed(src kv.Reader, at uint64, tag string, keep [][]byte) (SeedStats, error) {
	var st SeedStats
	s.wmu.Lock()
	defer s.wmu.Unlock()
	keep = slices.SortedFunc(slices.Values(keep), bytes.Compare) // the merge walks keys in order
	spans := cut(s.Spans(), at)
	b := s.db.NewBatch()
	if err := s.commitSpans(b, spans); err != nil {
		b.Close()
		return st, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: rowPrefix, UpperBound: kv.PrefixEnd(rowPrefix)})
	if err != nil {
		return st, err
	}
	defer it.Close()
	w := &seedWriter{s: s, b: s.db.NewBatch(), at: at, keep: keep}
	defer func() { w.b.Close() }()
	old := &cursor{it: it, at: at, skip: s.skipped()}
	ok, err := w.advance(old)
	if err != nil {
		return st, err
	}
	for _, p := range keep {
		err := src.Scan(p, kv.PrefixEnd(p), false, func(k, v []byte) error {
			st.Scanned++
			// Keys the store holds and src lacks were deleted.
			for ok && bytes.Compare(w.key, k) < 0 {
				if err := w.write(w.key, tagDelete, nil); err != nil {
					return err
				}
				if ok, err = w.advance(old); err != nil {
					return err
				}
			}
			if ok && bytes.Equal(w.key, k) {
				same := bytes.Equal(w.value, v)
				var err error
				if ok, err = w.advance(old); err != nil {
					return err
				}
				if same {
					return nil
				}
			}
			return w.write(k, tagSet, v)
		})
		if err != nil {
			return st, fmt.Errorf("versions: seed at %d: %w", at, err)
		}
	}
	for ; ok; ok, err = w.advance(old) {
		if err := w.write(w.key, tagDelete, nil); err != nil {
			return st, err
		}
	}
	if err != nil {
		return st, err
	}
	st.Written = w.written
	spans = append(spans, Span{From: at, To: at, Tag: tag})
	return st, s.commitSpans(w.b, spans)
}

// cut ends the spans before index at, dropping those that start at or
// after it.
func cut(spans []Span, at uint64) []Span {
	out := make([]Span, 0, len(spans))
	for _, sp := range spans {
		if sp.From >= at {
			continue
		}
		sp.To = min(sp.To, at-1)
		out = append(out, sp)
	}
	return out
}

// seedWriter writes a seed's versions in batches, and holds the store's
// current key (from advance) in the merge with the source.
type seedWriter struct {
	s          *Store
	b          *pebble.Batch
	at         uint64
	keep       [][]byte
	key, value []byte
	written    int
}

// advance moves to the store's next key present at the seed's index and
// under a kept prefix.
func (w *seedWriter) advance(c *cursor) (bool, error) {
	for {
		k, v, ok, err := c.next()
		if err != nil || !ok {
			w.key, w.value = nil, nil
			return false, err
		}
		if under(k, w.keep) {
			w.key, w.value = k, v
			return true, nil
		}
	}
}

func (w *seedWriter) write(key []byte, tag byte, v []byte) error {
	if err := w.b.Set(versionKey(key, w.at), encodeValue(tag, v), nil); err != nil {
		return err
	}
	w.written++
	var err error
	w.b, err = w.s.rollover(w.b)
	return err
}

// rollover commits b and returns a new batch once b holds
// seedBatchBytes, so a long pass (a seed, a prune) writes in bounded
// batches; else it returns b.
func (s *Store) rollover(b *pebble.Batch) (*pebble.Batch, error) {
	if b.Len() < seedBatchBytes {
		return b, nil
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return b, fmt.Errorf("versions: commit: %w", err)
	}
	b.Close()
	return s.db.NewBatch(), nil
}
