package nodes

import (
	"github.com/ordoplane/ordo/projections"
)

// Get returns the node with exactly id, or projections.ErrNotFound.
func Get(v projections.View, id string) (*Node, error) {
	r, err := v.Get(Table, id)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// Resolve returns the node whose id is idOrPrefix or, failing that, the one
// node whose id starts with it: projections.ErrNotFound when none does, an
// *projections.AmbiguousError when several do.
func Resolve(v projections.View, idOrPrefix string) (*Node, error) {
	r, err := projections.Resolve(v, Table, "node", idOrPrefix)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// List returns the nodes whose id starts with prefix, by id.
func List(v projections.View, prefix string) ([]*Node, error) {
	var out []*Node
	err := v.Scan(Table, prefix, false, func(_ string, r projections.Row) error {
		n, err := fromRow(r)
		if err != nil {
			return err
		}
		out = append(out, n)
		return nil
	})
	return out, err
}
