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
func (s *Server) debugReschedule(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("eval_id")
	if err := alloc.ValidID("eval_id", id); err != nil {
		return err
	}
	if s.cfg.Rescheduler == nil {
		return notImplemented{errNoRescheduler}
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	index, err := v.AppliedIndex()
	if err != nil {
		return err
	}
	e, err := evals.Resolve(v, id)
	var amb *projections.AmbiguousError
	switch {
	case errors.Is(err, projections.ErrNotFound):
		return &commands.NotFoundError{Kind: "evaluation", ID: id}
	case errors.As(err, &amb):
		return commands.Invalid("eval_id", "%v", amb)
	case err != nil:
		return err
	}
	res, err := s.cfg.Rescheduler.Reschedule(snap, e.ID)
	if err != nil {
		return err
	}
	setIndex(w, index)
	writeJSON(w, http.StatusOK, res)
	return nil
}
