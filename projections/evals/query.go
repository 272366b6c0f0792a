package evals

import (
	"errors"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/order"
)

// Get returns the eval with exactly id, or projections.ErrNotFound.
func Get(v projections.View, id string) (*Eval, error) {
	r, err := v.Get(Table, id)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// Resolve returns the eval whose id is idOrPrefix or, failing that, the one
// eval whose id starts with it: projections.ErrNotFound when none does, an
// *projections.AmbiguousError when several do.
func Resolve(v projections.View, idOrPrefix string) (*Eval, error) {
	r, err := projections.Resolve(v, Table, "evaluation", idOrPrefix)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// Query selects evals for Scan.
type Query = order.Query

// Scan calls fn with each eval q selects, in creation order (N20); fn may
// return an error to stop, which Scan returns.
func Scan(v projections.View, q Query, fn func(*Eval) error) error {
	return order.Scan(v, Table, ByCreateTable, q, fromRow, func(x *Eval) string { return x.Namespace }, fn)
}

// ByJob returns the evals of a job in creation order.
func ByJob(v projections.View, namespace, job string) ([]*Eval, error) {
	return order.Collect(v, Table, ByJobTable, JobKey(namespace, job), fromRow)
}

// Related fills e.RelatedEvals with the stubs of its next, previous and
// blocked evals that still exist, in that order (N17), and returns e.
func Related(v projections.View, e *Eval) (*Eval, error) {
	e.RelatedEvals = []*Stub{}
	for _, id := range []string{e.NextEval, e.PreviousEval, e.BlockedEval} {
		if id == "" || id == e.ID {
			continue
		}
		r, err := Get(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		e.RelatedEvals = append(e.RelatedEvals, r.Stub())
	}
	return e, nil
}
