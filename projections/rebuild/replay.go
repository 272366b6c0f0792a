package rebuild

import (
	"context"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

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
// writes only its own tables (projections.Projection.Tables; Replay enforces it, with
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
func Replay(ctx context.Context, src kv.Reader, dst *kv.Store, projs []projections.Projection, to uint64, progress func(Stats)) (Stats, error) {
	var st Stats
	first := dst.Batch()
	from, err := projections.NewView(first).AppliedIndex()
	if err != nil {
		first.Close()
		return st, err
	}
	if from > to {
		first.Close()
		return st, fmt.Errorf("%w: applied %d, asked for %d", ErrReplayBehind, from, to)
	}
	if err := projections.CheckVersions(projections.NewView(first), projs); err != nil {
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

	empty := false
	if from == 0 {
		if empty, err = isEmpty(dst); err != nil {
			return st, err
		}
	}
	l := newLanes(dst, empty, projs, ctx.Err)
	defer l.close()
	l.progress = progress
	if err := l.run(src, from+1, to); err != nil {
		return l.stats(), err
	}
	st = l.stats()
	st.Last = to
	w := dst.WriteBatch()
	if err := w.Set(layout.AppliedKey, kv.Uint64Value(to)); err != nil {
		w.Close()
		return st, err
	}
	return st, w.Commit(false)
}
