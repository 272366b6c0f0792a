package allocs

import (
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/order"
)

// Get returns the alloc with exactly id, or projections.ErrNotFound.
func Get(v projections.View, id string) (*Alloc, error) {
	r, err := v.Get(Table, id)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// Resolve returns the alloc whose id is idOrPrefix or, failing that, the one
// alloc whose id starts with it: projections.ErrNotFound when none does, an
// *projections.AmbiguousError when several do.
func Resolve(v projections.View, idOrPrefix string) (*Alloc, error) {
	r, err := projections.Resolve(v, Table, "allocation", idOrPrefix)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// Query selects allocs for Scan.
type Query = order.Query

// Scan calls fn with each alloc q selects, in creation order; fn may
// return an error to stop, which Scan returns.
func Scan(v projections.View, q Query, fn func(*Alloc) error) error {
	return order.Scan(v, Table, ByCreateTable, q, fromRow, func(x *Alloc) string { return x.Namespace }, fn)
}

// ByNode returns the allocs on a node in creation order.
func ByNode(v projections.View, node string) ([]*Alloc, error) {
	return byIndex(v, ByNodeTable, NodeKey(node))
}

// ByJob returns the allocs of a job in creation order.
func ByJob(v projections.View, namespace, job string) ([]*Alloc, error) {
	return byIndex(v, ByJobTable, JobKey(namespace, job))
}

// ByEval returns the allocs an eval placed in creation order.
func ByEval(v projections.View, eval string) ([]*Alloc, error) {
	return byIndex(v, ByEvalTable, EvalKey(eval))
}

func byIndex(v projections.View, index, prefix string) ([]*Alloc, error) {
	return order.Collect(v, Table, index, prefix, fromRow)
}
