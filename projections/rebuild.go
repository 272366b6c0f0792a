package projections

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// RebuildStats reports what a rebuild read and applied.
type RebuildStats struct {
	Events  uint64
	Entries uint64
	Last    uint64
}

// rebuildBatchEntries is how many entries a rebuild commits per batch.
const rebuildBatchEntries = 2048

// rebuildChunk is how many decoded events travel from the reader to the
// applier at a time.
const rebuildChunk = 512

// Rebuild replays the archive in src into the empty store dst, applying
// every event to projs exactly as the FSM did, up to index to (0: all).
// progress, when set, is called after each committed batch. One goroutine
// reads and decodes the archive while the caller's applies, in order.
func Rebuild(src kv.Reader, dst *kv.Store, projs []Projection, to uint64, progress func(RebuildStats)) (RebuildStats, error) {
	var st RebuildStats
	fresh, err := isEmpty(dst)
	if err != nil {
		return st, err
	}
	w := &freshWriter{b: dst.Batch(), rows: map[string][]byte{}, complete: fresh}
	defer func() { w.b.Close() }()
	if err := CheckVersions(NewView(w), projs); err != nil {
		return st, err
	}

	chunks := make(chan []*events.Event, 4)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(chunks)
		readErr <- readArchive(src, to, chunks, stop)
	}()
	defer func() {
		close(stop)
		for range chunks {
		}
	}()

	tables := map[string]uint64{}
	var tx *Tx
	endEntry := func() {
		for _, t := range tx.changedTables() {
			tables[t] = tx.index
		}
		st.Entries++
		tx = nil
	}
	commit := func() error {
		for _, t := range sortedKeys(tables) {
			if err := w.Set(tableIndexKey(t), kv.Uint64Value(tables[t])); err != nil {
				return err
			}
		}
		if err := w.Set(appliedKey, kv.Uint64Value(st.Last)); err != nil {
			return err
		}
		if err := w.commit(dst); err != nil {
			return err
		}
		if progress != nil {
			progress(st)
		}
		return nil
	}
	for chunk := range chunks {
		for _, ev := range chunk {
			if tx != nil && tx.index != ev.Index {
				endEntry()
				if st.Entries%rebuildBatchEntries == 0 {
					if err := commit(); err != nil {
						return st, err
					}
				}
			}
			if tx == nil {
				tx = newTx(w, ev.Index, ev.Time)
			}
			for _, p := range projs {
				if err := p.Apply(tx, ev); err != nil {
					return st, fmt.Errorf("rebuild %s at %d: %w", p.Name(), ev.Index, err)
				}
			}
			st.Events++
			st.Last = ev.Index
		}
	}
	if err := <-readErr; err != nil {
		return st, err
	}
	if tx != nil {
		endEntry()
	}
	return st, commit()
}

// readArchive decodes the archive up to index to and sends it in chunks
// until it ends or stop closes.
func readArchive(src kv.Reader, to uint64, out chan<- []*events.Event, stop <-chan struct{}) error {
	chunk := make([]*events.Event, 0, rebuildChunk)
	send := func() error {
		select {
		case out <- chunk:
			chunk = make([]*events.Event, 0, rebuildChunk)
			return nil
		case <-stop:
			return kv.ErrStop
		}
	}
	err := archive.Scan(src, 1, to, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		chunk = append(chunk, ev)
		if len(chunk) == rebuildChunk {
			return send()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(chunk) > 0 {
		if err := send(); err != nil {
			return nil
		}
	}
	return nil
}

func sortedKeys(m map[string]uint64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isEmpty(s *kv.Store) (bool, error) {
	empty := true
	err := s.Scan(nil, nil, false, func(_, _ []byte) error {
		empty = false
		return kv.ErrStop
	})
	return empty, err
}

// freshRowsLimit bounds the bytes freshWriter keeps in memory.
const freshRowsLimit = 256 << 20

// freshWriter writes a rebuild's batches. A rebuild into an empty store
// knows every key the store holds, since it wrote them all: point reads are
// answered from memory, and a key it never wrote is absent without asking
// Pebble. Past freshRowsLimit it forgets and reads through the batch.
type freshWriter struct {
	b        *kv.Batch
	rows     map[string][]byte // nil value: deleted
	size     int
	complete bool
}

var _ kv.Writer = (*freshWriter)(nil)

func (w *freshWriter) Get(key []byte) ([]byte, error) {
	if w.complete {
		v, ok := w.rows[string(key)]
		if !ok || v == nil {
			return nil, kv.ErrNotFound
		}
		return v, nil
	}
	return w.b.Get(key)
}

func (w *freshWriter) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return w.b.Scan(lower, upper, reverse, fn)
}

func (w *freshWriter) Set(key, value []byte) error {
	if w.complete {
		w.remember(key, append([]byte{}, value...))
	}
	return w.b.Set(key, value)
}

func (w *freshWriter) Delete(key []byte) error {
	if w.complete {
		w.remember(key, nil)
	}
	return w.b.Delete(key)
}

func (w *freshWriter) remember(key, value []byte) {
	w.size += len(key) + len(value)
	if w.size > freshRowsLimit {
		w.complete, w.rows = false, nil
		return
	}
	w.rows[string(key)] = value
}

// commit commits the batch and starts the next one.
func (w *freshWriter) commit(dst *kv.Store) error {
	if err := w.b.Commit(); err != nil {
		return err
	}
	w.b = dst.Batch()
	return nil
}

// Checksum hashes every table of p: its index and its rows in key order.
// Two stores with equal checksums hold identical projections.
func Checksum(r kv.Reader, p Projection) ([32]byte, error) {
	h := sha256.New()
	v := NewView(r)
	var n [8]byte
	for _, t := range p.Tables() {
		idx, err := v.TableIndex(t)
		if err != nil {
			return [32]byte{}, err
		}
		h.Write([]byte(t))
		binary.BigEndian.PutUint64(n[:], idx)
		h.Write(n[:])
		err = v.Scan(t, "", false, func(key string, row Row) error {
			binary.BigEndian.PutUint64(n[:], uint64(len(key)))
			h.Write(n[:])
			h.Write([]byte(key))
			h.Write(encodeRow(row))
			return nil
		})
		if err != nil {
			return [32]byte{}, fmt.Errorf("checksum %s: %w", t, err)
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}
