package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/projections"
)

// blockOnKey is block for a read that depends on one key of a key-watched
// table (projections.WatchKeys): its index is that row's modify index, and
// it wakes only when that key changes — a node's long-poll for its own
// allocations does not wake on every allocation change in the cluster. A
// key never written answers index 1, so the next query waits for it. A
// key unchanged since an operator's snapshot restore answers the
// restore's index (View.RestoredIndex): the restore replaced it.
func (s *Server) blockOnKey(ctx context.Context, bp blockingParams, table, key string, read func(v projections.View) (any, error)) (any, uint64, error) {
	deadline, stop := s.startWait(bp)
	defer stop()
	notify := s.cfg.FSM.Notifier()
	for {
		// Take the watch channel before reading, so no change is missed.
		ch := notify.Table(projections.KeyTopic(table, key))
		snap := s.cfg.FSM.Store().Snapshot()
		v := projections.NewView(snap)
		index, err := v.RestoredIndex() // a restore replaced every key (View.RestoredIndex)
		if err != nil {
			snap.Close()
			return nil, 0, err
		}
		index = max(index, 1)
		row, err := v.Get(table, key)
		switch {
		case err == nil:
			index = max(index, row.ModifyIndex)
		case !errors.Is(err, projections.ErrNotFound):
			snap.Close()
			return nil, 0, err
		}
		if bp.index == 0 || index > bp.index || deadline == nil {
			res, err := read(v)
			snap.Close()
			return res, index, err
		}
		snap.Close()
		if !waitAny(ctx, deadline, []<-chan struct{}{ch}) {
			deadline = nil // time is up: answer with what there is
		}
	}
}

// queryKey is query over blockOnKey; a read of a past state (at_index or
// at_time) is served as every other read is.
func (s *Server) queryKey(w http.ResponseWriter, r *http.Request, table, key string, read func(v projections.View) (any, error)) {
	if at, err := historical(r); err != nil || at != nil {
		s.query(w, r, []string{table}, read)
		return
	}
	bp, err := s.parseBlocking(r)
	if err != nil {
		writeError(w, err)
		return
	}
	res, index, err := s.blockOnKey(r.Context(), bp, table, key, read)
	if err != nil {
		writeError(w, err)
		return
	}
	setIndex(w, index)
	writeJSON(w, http.StatusOK, res)
}
