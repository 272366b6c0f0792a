package versions

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/storage/kv"
)

// fillKey holds the fill under way, if any.
var fillKey = []byte("m/fill")

// ErrNoFill is a fill write or end with no fill begun, or for another
// range or tag than the one begun.
var ErrNoFill = errors.New("versions: no such fill under way")

// Fill is a range of indexes being written below a span (BeginFill): a
// backfill of the past from a replay of the source's history. Until
// EndFill, reads do not see the versions it wrote, so a fill half done
// never changes an answer.
type Fill struct {
	// From and To are the indexes the fill covers once ended.
	From uint64 `msgpack:"f"`
	To   uint64 `msgpack:"t"`
	// Tag is the tag of the span the fill joins.
	Tag string `msgpack:"g"`
}

// skip is the range of version indexes a read ignores: a fill's.
type skip struct{ lo, hi uint64 }

func (k skip) has(index uint64) bool { return k.hi != 0 && k.lo <= index && index <= k.hi }

func loadFill(db *pebble.DB) (*Fill, error) {
	v, closer, err := db.Get(fillKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("versions: read fill: %w", err)
	}
	defer closer.Close()
	var f Fill
	if err := msgpack.Unmarshal(v, &f); err != nil {
		return nil, fmt.Errorf("versions: decode fill: %w", err)
	}
	return &f, nil
}

// Filling returns the fill under way, nil when none.
func (s *Store) Filling() *Fill {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fill == nil {
		return nil
	}
	f := *s.fill
	return &f
}

// skipped returns the versions reads must not see (a fill's).
func (s *Store) skipped() skip {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fill == nil {
		return skip{}
	}
	return skip{lo: s.fill.From, hi: s.fill.To}
}

// BeginFill starts filling the indexes from..to below the span of tag
// that begins at to+1: no span may cover any of them, and no other fill
// be under way. The filler then writes the versions of every index in
// from..to+1 (FillState, FillBatch) as its replay of the source makes them,
// and EndFill joins them to the spans. A fill left by a crash is ended by
// the next BeginFill's caller with AbortFill.
func (s *Store) BeginFill(from, to uint64, tag string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if from == 0 || to < from {
		return fmt.Errorf("versions: fill %d..%d is empty or starts at 0", from, to)
	}
	if f := s.Filling(); f != nil {
		return fmt.Errorf("versions: fill %d..%d already under way", f.From, f.To)
	}
	next := false
	for _, sp := range s.Spans() {
		if sp.From <= to && sp.To >= from {
			return fmt.Errorf("versions: fill %d..%d overlaps span %d..%d", from, to, sp.From, sp.To)
		}
		next = next || (sp.From == to+1 && sp.Tag == tag)
	}
	if !next {
		return fmt.Errorf("versions: fill %d..%d: no span of %s begins at %d", from, to, tag, to+1)
	}
	return s.commitFill(s.db.NewBatch(), &Fill{From: from, To: to, Tag: tag})
}

// AbortFill drops the fill under way, if any, and the versions it wrote:
// a deletion of every version in its range, key by key (a fill half done
// by a crashed process, or cut short).
func (s *Store) AbortFill() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	f := s.Filling()
	if f == nil {
		return nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: rowPrefix, UpperBound: kv.PrefixEnd(rowPrefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer func() { b.Close() }()
	for valid := it.First(); valid; valid = it.Next() {
		_, index, err := parseKey(it.Key())
		if err != nil {
			return err
		}
		if index < f.From || index > f.To {
			continue
		}
		if err := b.Delete(it.Key(), nil); err != nil {
			return err
		}
		if b, err = s.rollover(b); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return s.commitFill(b, nil)
}

// FillState writes src's keys under the prefixes keep as versions at at,
// the fill's first index: the state a fill starts from when it does not
// start from nothing (a saved state the history builds on).
func (s *Store) FillState(src kv.Reader, at uint64, keep [][]byte) error {
	f := s.Filling()
	if f == nil || at != f.From {
		return fmt.Errorf("%w: state at %d", ErrNoFill, at)
	}
	w := &seedWriter{s: s, b: s.db.NewBatch(), at: at, keep: keep}
	defer func() { w.b.Close() }()
	for _, p := range keep {
		err := src.Scan(p, kv.PrefixEnd(p), false, func(k, v []byte) error { return w.write(k, tagSet, v) })
		if err != nil {
			return fmt.Errorf("versions: fill state at %d: %w", at, err)
		}
	}
	return w.b.Commit(pebble.NoSync)
}

// FillBatch writes rec's versions, each at the index of the entry that
// wrote it, as Append does, into the fill under way: rec's indexes must
// lie in the fill's range or at the index just past it (where the span
// the fill joins begins, and where the fill's replay must end).
func (s *Store) FillBatch(rec Record, keep [][]byte) error {
	f := s.Filling()
	if f == nil || rec.Tag != f.Tag || rec.From+1 < f.From || rec.To > f.To+1 || rec.To < rec.From {
		return fmt.Errorf("%w: batch %d→%d (%s)", ErrNoFill, rec.From, rec.To, rec.Tag)
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := writeRecord(b, rec, keep); err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

// EndFill ends the fill under way: its range joins the spans (merged with
// the spans of its tag it touches), and reads see its versions.
func (s *Store) EndFill() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	f := s.Filling()
	if f == nil {
		return ErrNoFill
	}
	var spans []Span
	added := false
	for _, sp := range s.Spans() {
		if !added && sp.From > f.To {
			spans = append(spans, Span{From: f.From, To: f.To, Tag: f.Tag})
			added = true
		}
		spans = append(spans, sp)
	}
	if !added {
		spans = append(spans, Span{From: f.From, To: f.To, Tag: f.Tag})
	}
	merged := spans[:0]
	for _, sp := range spans {
		if n := len(merged); n > 0 && merged[n-1].Tag == sp.Tag && merged[n-1].To+1 == sp.From {
			merged[n-1].To = sp.To
			continue
		}
		merged = append(merged, sp)
	}
	b := s.db.NewBatch()
	defer b.Close()
	return s.commitMeta(b, merged, true)
}

// Wipe drops every version, span and fill: the store starts again empty
// (a history replaced by a restore, or rows written by other projection
// versions). Readers opened before it may see rows vanish.
func (s *Store) Wipe() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(rowPrefix, kv.PrefixEnd(rowPrefix), nil); err != nil {
		return err
	}
	return s.commitMeta(b, nil, true)
}

// commitFill writes f (nil: none) into b, commits it and makes it current.
func (s *Store) commitFill(b *pebble.Batch, f *Fill) error {
	defer b.Close()
	if err := setFill(b, f); err != nil {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("versions: commit fill: %w", err)
	}
	s.mu.Lock()
	s.fill = f
	s.mu.Unlock()
	return nil
}

func setFill(b *pebble.Batch, f *Fill) error {
	if f == nil {
		return b.Delete(fillKey, nil)
	}
	v, err := msgpack.Marshal(f)
	if err != nil {
		return err
	}
	return b.Set(fillKey, v, nil)
}
