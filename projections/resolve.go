package projections

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/storage/kv"
)

// AmbiguousError is an id prefix that matches more than one row.
type AmbiguousError struct {
	// Kind names what was looked up, such as "evaluation".
	Kind   string
	Prefix string
	// Matches are the first matching ids, at most maxMatches.
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("prefix %q matches several %ss: %v", e.Prefix, e.Kind, e.Matches)
}

// maxMatches bounds the ids an AmbiguousError lists.
const maxMatches = 8

// Resolve returns the row of table whose key is idOrPrefix or, failing
// that, the one row whose key starts with it: ErrNotFound when none does,
// an *AmbiguousError (naming kind) when several do. Nomad's CLI and API
// take such short ids.
func Resolve(v View, table, kind, idOrPrefix string) (Row, error) {
	r, err := v.Get(table, idOrPrefix)
	if !errors.Is(err, ErrNotFound) || idOrPrefix == "" {
		return r, err
	}
	var rows []Row
	var ids []string
	err = v.Scan(table, idOrPrefix, false, func(key string, r Row) error {
		r.Value = bytes.Clone(r.Value) // the scan reuses its buffers after fn returns
		rows, ids = append(rows, r), append(ids, key)
		if len(ids) > maxMatches {
			return kv.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, kv.ErrStop) {
		return Row{}, err
	}
	switch len(rows) {
	case 0:
		return Row{}, ErrNotFound
	case 1:
		return rows[0], nil
	}
	return Row{}, &AmbiguousError{Kind: kind, Prefix: idOrPrefix, Matches: ids[:min(len(ids), maxMatches)]}
}
