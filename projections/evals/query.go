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
type Query struct {
	// Namespace keeps the evals of one namespace; "" or "*" keeps all.
	Namespace string
	// Prefix keeps the evals whose id starts with it.
	Prefix string
	// Reverse lists newest first.
	Reverse bool
	// From is the order.Key to start at, from a page token; "" for the first.
	From string
}

// Scan calls fn with each eval q selects, in creation order (N20); fn may
// return an error to stop, which Scan returns.
func Scan(v projections.View, q Query, fn func(*Eval) error) error {
	return order.Walk(v, Table, ByCreateTable, q.Prefix, q.From, q.Reverse, func(_ string, r projections.Row) error {
		e, err := fromRow(r)
		if err != nil {
			return err
		}
		if q.Namespace != "" && q.Namespace != "*" && e.Namespace != q.Namespace {
			return nil
		}
		return fn(e)
	})
}

// ByJob returns the evals of a job in creation order.
func ByJob(v projections.View, namespace, job string) ([]*Eval, error) {
	_, rows, err := order.Sorted(v, Table, ByJobTable, JobKey(namespace, job))
	if err != nil {
		return nil, err
	}
	out := make([]*Eval, 0, len(rows))
	for _, r := range rows {
		e, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
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
