package nodes

import (
	"errors"

	"github.com/ordoplane/ordo/projections"
)

// Get returns the node with exactly id, or projections.ErrNotFound.
func Get(v projections.View, id string) (*Node, error) {
	r, err := v.Get(Table, id)
	if err != nil {
		return nil, err
	}
	return withAllocUpdate(v, r)
}

// withAllocUpdate decodes row r of Table and fills the node's
// LastAllocUpdateIndex from AllocUpdatesTable.
func withAllocUpdate(v projections.View, r projections.Row) (*Node, error) {
	n, err := fromRow(r)
	if err != nil {
		return nil, err
	}
	u, err := v.Get(AllocUpdatesTable, n.ID)
	switch {
	case err == nil:
		n.LastAllocUpdateIndex = u.ModifyIndex
	case !errors.Is(err, projections.ErrNotFound):
		return n, err
	}
	return n, nil
}

// Resolve returns the node whose id is idOrPrefix or, failing that, the one
// node whose id starts with it: projections.ErrNotFound when none does, an
// *projections.AmbiguousError when several do.
func Resolve(v projections.View, idOrPrefix string) (*Node, error) {
	r, err := projections.Resolve(v, Table, "node", idOrPrefix)
	if err != nil {
		return nil, err
	}
	return withAllocUpdate(v, r)
}

// List returns the nodes whose id starts with prefix, by id.
func List(v projections.View, prefix string) ([]*Node, error) {
	var out []*Node
	err := Scan(v, Query{Prefix: prefix}, func(n *Node) error {
		out = append(out, n)
		return nil
	})
	return out, err
}

// Query selects nodes for Scan.
type Query struct {
	// Prefix keeps the nodes whose id starts with it.
	Prefix string
	// From is the id to start at, inclusive; "" for the first (the last
	// when Reverse is set).
	From string
	// Reverse lists in descending id order.
	Reverse bool
}

// Scan calls fn with each node q selects, by id (descending when
// q.Reverse is set), the order of Nomad's node list; fn may return an
// error to stop, which Scan returns.
func Scan(v projections.View, q Query, fn func(*Node) error) error {
	return v.ScanFrom(Table, q.Prefix, q.From, q.Reverse, func(_ string, r projections.Row) error {
		n, err := fromRow(r)
		if err != nil {
			return err
		}
		return fn(n)
	})
}
