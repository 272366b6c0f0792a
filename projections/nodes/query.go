package nodes

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
)

// AmbiguousError is a prefix that matches more than one node.
type AmbiguousError struct {
	Prefix string
	// Matches are the first matching ids, at most maxMatches.
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("prefix %q matches several nodes: %v", e.Prefix, e.Matches)
}

const maxMatches = 8

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
// *AmbiguousError when several do.
func Resolve(v projections.View, idOrPrefix string) (*Node, error) {
	n, err := Get(v, idOrPrefix)
	if !errors.Is(err, projections.ErrNotFound) || idOrPrefix == "" {
		return n, err
	}
	var found []projections.Row
	var ids []string
	err = v.Scan(Table, idOrPrefix, false, func(key string, r projections.Row) error {
		r.Value = bytes.Clone(r.Value) // the scan reuses its buffers after fn returns
		found = append(found, r)
		ids = append(ids, key)
		if len(ids) > maxMatches {
			return kv.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, kv.ErrStop) {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, projections.ErrNotFound
	case 1:
		return fromRow(found[0])
	}
	return nil, &AmbiguousError{Prefix: idOrPrefix, Matches: ids[:min(len(ids), maxMatches)]}
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
