package httpapi

import (
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/alloc"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

// errNoRescheduler answers a re-run on a server built without one.
var errNoRescheduler = errors.New("ordo: this server does not re-run scheduling decisions")

// debugReschedule serves GET /v1/debug/reschedule/{eval_id}: the eval's
// recorded scheduling decision re-run on the state it was made on, next
// to the recorded plan, with their diff (Config.Rescheduler). The eval id
// may be a unique prefix. Any server answers from its own archive, and
// nothing is appended: the re-run rebuilds the archive's prefix into a
// scratch store. X-Nomad-Index is the applied index read.
func (s *Server) debugReschedule(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("eval_id")
	if err := alloc.ValidID("eval_id", id); err != nil {
		writeError(w, err)
		return
	}
	if s.cfg.Rescheduler == nil {
		writeJSON(w, http.StatusNotImplemented, errorBody{Error: errNoRescheduler.Error(), Status: http.StatusNotImplemented})
		return
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	index, err := v.AppliedIndex()
	if err != nil {
		writeError(w, err)
		return
	}
	e, err := evals.Resolve(v, id)
	var amb *projections.AmbiguousError
	switch {
	case errors.Is(err, projections.ErrNotFound):
		writeError(w, &commands.NotFoundError{Kind: "evaluation", ID: id})
		return
	case errors.As(err, &amb):
		writeError(w, commands.Invalid("eval_id", "%v", amb))
		return
	case err != nil:
		writeError(w, err)
		return
	}
	res, err := s.cfg.Rescheduler(snap, e.ID)
	if err != nil {
		writeError(w, err)
		return
	}
	setIndex(w, index)
	writeJSON(w, http.StatusOK, res)
}
