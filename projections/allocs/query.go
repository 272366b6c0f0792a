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
type Query struct {
	// Namespace keeps the allocs of one namespace; "" or "*" keeps all.
	Namespace string
	// Prefix keeps the allocs whose id starts with it.
	Prefix string
	// Reverse lists newest first.
	Reverse bool
	// From is the order.Key to start at, from a page token; "" for the first.
	From string
}

// Scan calls fn with each alloc q selects, in creation order; fn may
// return an error to stop, which Scan returns.
func Scan(v projections.View, q Query, fn func(*Alloc) error) error {
	return order.Walk(v, Table, ByCreateTable, q.Prefix, q.From, q.Reverse, func(_ string, r projections.Row) error {
		a, err := fromRow(r)
		if err != nil {
			return err
		}
		if q.Namespace != "" && q.Namespace != "*" && a.Namespace != q.Namespace {
			return nil
		}
		return fn(a)
	})
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
	_, rows, err := order.Sorted(v, Table, index, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]*Alloc, 0, len(rows))
	for _, r := range rows {
		a, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
