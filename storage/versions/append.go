package versions

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
)

// ErrUnsupported is a batch holding a write Append cannot version (a range
// deletion, a merge): the store must be seeded again past it.
var ErrUnsupported = errors.New("versions: batch holds a write that cannot be versioned")

// Mark is where one entry's writes end in a Record's batch.
type Mark struct {
	// Index is the entry's index.
	Index uint64
	// Ops is how many writes the batch held once the entry was applied.
	Ops uint32
}

// Record is a batch the source committed: its writes in Pebble's batch
// encoding, which took the source from index From to index To.
type Record struct {
	From, To uint64
	Repr     []byte
	// Marks attribute the writes to entries: writes before Marks[k].Ops
	// (and at or after Marks[k-1].Ops) are entry Marks[k].Index's; the
	// writes after the last mark are To's.
	Marks []Mark
	// Tag names the writer's projection versions; it must be the newest
	// span's.
	Tag string
}

// Append records rec's writes, each as a version at the index of the entry
// that wrote it, and extends the newest span to rec.To. rec must follow
// the newest span (From its end, the same Tag), else it is ErrGap. Only
// keys under one of the prefixes keep are recorded.
func (s *Store) Append(rec Record, keep [][]byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	spans := append([]Span(nil), s.spans...)
	s.mu.Unlock()
	if len(spans) == 0 {
		return ErrGap
	}
	last := &spans[len(spans)-1]
	if last.To != rec.From || last.Tag != rec.Tag || rec.To < rec.From {
		return fmt.Errorf("%w: span ends at %d (%s), batch %d→%d (%s)", ErrGap, last.To, last.Tag, rec.From, rec.To, rec.Tag)
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := writeRecord(b, rec, keep); err != nil {
		return err
	}
	last.To = rec.To
	return s.commitSpans(b, spans)
}

// writeRecord adds rec's writes under the prefixes keep to b, each as a
// version at the index of the entry that wrote it.
func writeRecord(b *pebble.Batch, rec Record, keep [][]byte) error {
	r, _ := pebble.ReadBatch(rec.Repr)
	var op uint32
	var kbuf, vbuf []byte
	mark := 0
	for {
		kind, key, value, ok, err := r.Next()
		if err != nil {
			return fmt.Errorf("versions: read batch %d→%d: %w", rec.From, rec.To, err)
		}
		if !ok {
			return nil
		}
		if kind == pebble.InternalKeyKindLogData {
			continue
		}
		for mark < len(rec.Marks) && op >= rec.Marks[mark].Ops {
			mark++
		}
		op++
		index := rec.To
		if mark < len(rec.Marks) {
			index = rec.Marks[mark].Index
		}
		if !under(key, keep) {
			continue
		}
		// The batch copies key and value: one buffer serves every write.
		kbuf = appendVersionKey(kbuf[:0], key, index)
		switch kind {
		case pebble.InternalKeyKindSet:
			vbuf = append(append(vbuf[:0], tagSet), value...)
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindSingleDelete, pebble.InternalKeyKindDeleteSized:
			vbuf = append(vbuf[:0], tagDelete)
		default:
			return fmt.Errorf("%w: %s at %d", ErrUnsupported, kind, index)
		}
		if err := b.Set(kbuf, vbuf, nil); err != nil {
			return err
		}
	}
}

// under reports whether key is under one of the prefixes.
func under(key []byte, prefixes [][]byte) bool {
	for _, p := range prefixes {
		if bytes.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
