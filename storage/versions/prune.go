package versions

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/ordoplane/ordo/storage/kv"
)

// PruneStats says what a Prune removed.
type PruneStats struct {
	// Removed counts the versions deleted, Kept those left.
	Removed, Kept int
}

// Prune drops what no read at index below or later needs: each key's
// versions older than its newest one at or below below, and that one too
// when it is a deletion. It refuses to run while a fill is under way.
// Spans are cut first to begin at below at the
// earliest (those ending before it go), so no read below is served from
// then on. A Reader opened below before the prune may see rows vanish.
func (s *Store) Prune(below uint64) (PruneStats, error) {
	var st PruneStats
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if f := s.Filling(); f != nil {
		return st, fmt.Errorf("versions: prune below %d while %d..%d is being filled", below, f.From, f.To)
	}
	var spans []Span
	for _, sp := range s.Spans() {
		if sp.To < below {
			continue
		}
		sp.From = max(sp.From, below)
		spans = append(spans, sp)
	}
	if err := s.commitSpans(s.db.NewBatch(), spans); err != nil {
		return st, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: rowPrefix, UpperBound: kv.PrefixEnd(rowPrefix)})
	if err != nil {
		return st, err
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer func() { b.Close() }()
	var prefix []byte // the current key's
	seen := false     // whether the current key's newest version at or below below was met
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		key, index, err := parseKey(k)
		if err != nil {
			return st, err
		}
		if prefix == nil || !bytes.HasPrefix(k, prefix) {
			prefix, seen = keyPrefix(key), false
		}
		if index > below {
			st.Kept++
			continue
		}
		if !seen {
			seen = true
			_, deleted, err := decodeValue(it.Value())
			if err != nil {
				return st, err
			}
			if !deleted {
				st.Kept++
				continue
			}
		}
		if err := b.Delete(k, nil); err != nil {
			return st, err
		}
		st.Removed++
		if b, err = s.rollover(b); err != nil {
			return st, err
		}
	}
	if err := it.Error(); err != nil {
		return st, err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return st, fmt.Errorf("versions: prune commit: %w", err)
	}
	return st, nil
}
