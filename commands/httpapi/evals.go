package httpapi

import (
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

// listEvals lists evaluations in creation order, oldest first (N20).
func (s *Server) listEvals(w http.ResponseWriter, r *http.Request) error {
	pq, err := parsePageQuery(r)
	if err != nil {
		return err
	}
	s.queryPage(w, r, evalTables, func(v projections.View) (any, error) {
		p := newPager(pq)
		err := evals.Scan(v, evals.Query{Namespace: pq.namespace, Prefix: pq.prefix, Reverse: pq.reverse, From: pq.from},
			func(e *evals.Eval) error { return p.add(e.CreateIndex, e.ID, e) })
		return p.result(err)
	})
	return nil
}

// getEval answers one eval by id or unique prefix; ?related=true adds its
// next, previous and blocked evals (N17).
func (s *Server) getEval(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	related, err := queryBool(r, "related")
	if err != nil {
		return err
	}
	s.query(w, r, evalTables, func(v projections.View) (any, error) {
		e, err := evals.Resolve(v, id)
		var amb *projections.AmbiguousError
		switch {
		case errors.Is(err, projections.ErrNotFound):
			return nil, &commands.NotFoundError{Kind: "evaluation", ID: id}
		case errors.As(err, &amb):
			return nil, commands.Invalid("id", "%v", amb)
		case err != nil:
			return nil, err
		}
		if err := s.authorizeNamespace(r, e.Namespace, policy.CapReadJob); err != nil {
			return nil, err
		}
		if related {
			return evals.Related(v, e)
		}
		return e, nil
	})
	return nil
}

func (s *Server) jobEvals(w http.ResponseWriter, r *http.Request) error {
	id, ns := r.PathValue("id"), queryNamespace(r)
	s.query(w, r, evalTables, func(v projections.View) (any, error) {
		list, err := evals.ByJob(v, ns, id)
		if list == nil {
			list = []*evals.Eval{}
		}
		return list, err
	})
	return nil
}
