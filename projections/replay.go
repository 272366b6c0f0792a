package projections

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// replayBatchEntries is how many entries Replay commits per batch.
const replayBatchEntries = 8192

// ErrReplayBehind is returned by Replay when the store has already applied
// past the index it was asked to reach: projections cannot go back.
var ErrReplayBehind = errors.New("ordo: store is past the replay target")

// ErrForeignTable is returned by Replay when a projection reads or writes
// a table it does not own: replaying some projections without the others
// would then be wrong.
var ErrForeignTable = errors.New("ordo: projection touched a table it does not own")

// Replay brings the projections in dst from the index they have applied
// (0 for an empty store) forward to index to, applying the archive's events
// from src in (applied, to] exactly as the FSM did, and records to as
// dst's applied index. dst may be empty or hold projections at an earlier
// index (a checkpoint of a live store, or an earlier Replay); only
// projection rows, table indexes, projection metadata and the applied index
// are written: the archive itself is not copied.
//
// projs may be some of the projections only: each projection reads and
// writes only its own tables (Projection.Tables; Replay enforces it, with
// ErrForeignTable), so their tables end at index to exactly as a replay of
// every projection leaves them, while the tables of the others keep what
// dst held. The applied index dst records is then true of projs' tables
// only. progress, when set, is
// called after each committed batch. One goroutine reads and decodes the
// archive while the caller's applies, in order. Cancelling ctx stops the
// replay between chunks of events, leaving dst at the last whole batch.
//
// src must hold every event in (applied, to]: it is read, never written,
// so a live store's archive serves (it is append-only).
func Replay(ctx context.Context, src kv.Reader, dst *kv.Store, projs []Projection, to uint64, progress func(RebuildStats)) (RebuildStats, error) {
	var st RebuildStats
	first := dst.Batch()
	from, err := NewView(first).AppliedIndex()
	if err != nil {
		first.Close()
		return st, err
	}
	if from > to {
		first.Close()
		return st, fmt.Errorf("%w: applied %d, asked for %d", ErrReplayBehind, from, to)
	}
	if err := CheckVersions(NewView(first), projs); err != nil {
		first.Close()
		return st, err
	}
	if err := first.Commit(); err != nil {
		return st, err
	}
	st.Last = from
	if from == to {
		return st, nil
	}

	chunks := make(chan []*events.Event, 4)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(chunks)
		readErr <- readArchiveRange(src, from+1, to, chunks, stop)
	}()
	defer func() {
		close(stop)
		for range chunks {
		}
	}()

	empty := false
	if from == 0 {
		if empty, err = isEmpty(dst); err != nil {
			return st, err
		}
	}
	b := newFreshWriter(dst, empty, freshRowsLimit)
	defer b.close()
	owned := ownedWriter{tables: map[string]bool{}}
	for _, p := range projs {
		for _, t := range p.Tables() {
			owned.tables[t] = true
		}
	}
	tables := map[string]uint64{}
	var tx *Tx
	endEntry := func() {
		for _, t := range tx.changedTables() {
			tables[t] = tx.index
		}
		st.Entries++
		tx = nil
	}
	commit := func(applied uint64) error {
		for _, t := range sortedKeys(tables) {
			if err := b.Set(tableIndexKey(t), kv.Uint64Value(tables[t])); err != nil {
				return err
			}
		}
		clear(tables)
		if err := b.Set(appliedKey, kv.Uint64Value(applied)); err != nil {
			return err
		}
		if err := b.commit(); err != nil {
			return err
		}
		if progress != nil {
			progress(st)
		}
		return nil
	}
	for chunk := range chunks {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		for _, ev := range chunk {
			if tx != nil && tx.index != ev.Index {
				last := tx.index
				endEntry()
				if st.Entries%replayBatchEntries == 0 {
					if err := commit(last); err != nil {
						return st, err
					}
				}
			}
			if tx == nil {
				owned.w = b
				tx = newTx(&owned, ev.Index, ev.Time)
			}
			for _, p := range projs {
				err := p.Apply(tx, ev)
				if err == nil {
					err = owned.err
				}
				if err != nil {
					return st, fmt.Errorf("replay %s at %d: %w", p.Name(), ev.Index, err)
				}
			}
			st.Events++
		}
	}
	if err := <-readErr; err != nil {
		return st, err
	}
	if tx != nil {
		endEntry()
	}
	st.Last = to
	return st, commit(to)
}

// readArchiveRange decodes the archive's events in [from, to] and sends
// them in chunks until the range ends or stop closes.
func readArchiveRange(src kv.Reader, from, to uint64, out chan<- []*events.Event, stop <-chan struct{}) error {
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
	err := archive.Scan(src, from, to, func(index uint64, seq uint32, data []byte) error {
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
		return send()
	}
	return nil
}

// ownedWriter passes a replay's reads and writes of rows and table indexes
// through when their table belongs to a replayed projection, and refuses
// the others with ErrForeignTable (remembering the first, in case a
// projection drops the error). Other keys pass.
type ownedWriter struct {
	w      kv.Writer
	tables map[string]bool
	err    error
}

var _ kv.Writer = (*ownedWriter)(nil)

// check returns ErrForeignTable for a key of a table no replayed
// projection owns.
func (o *ownedWriter) check(key []byte) error {
	if t, ok := KeyTable(key); ok && !o.tables[t] {
		err := fmt.Errorf("%w: %s", ErrForeignTable, t)
		if o.err == nil {
			o.err = err
		}
		return err
	}
	return nil
}

func (o *ownedWriter) Get(key []byte) ([]byte, error) {
	if err := o.check(key); err != nil {
		return nil, err
	}
	return o.w.Get(key)
}

func (o *ownedWriter) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	if err := o.check(lower); err != nil {
		return err
	}
	return o.w.Scan(lower, upper, reverse, fn)
}

func (o *ownedWriter) Set(key, value []byte) error {
	if err := o.check(key); err != nil {
		return err
	}
	return o.w.Set(key, value)
}

func (o *ownedWriter) Delete(key []byte) error {
	if err := o.check(key); err != nil {
		return err
	}
	return o.w.Delete(key)
}

// KeyTable returns the table a state store key belongs to: a row's
// ("t/<table>\x00<key>", or the table's whole keyspace "t/<table>\x00")
// or a table index's ("ti/<table>"); false for every other key (metadata,
// the archive).
func KeyTable(key []byte) (string, bool) {
	switch {
	case bytes.HasPrefix(key, []byte("t/")):
		rest := key[2:]
		if i := bytes.IndexByte(rest, 0); i >= 0 {
			return string(rest[:i]), true
		}
		return string(rest), true
	case bytes.HasPrefix(key, []byte("ti/")):
		return string(key[3:]), true
	}
	return "", false
}
