package order

import "github.com/ordoplane/ordo/projections"

// Query selects rows of a creation-ordered table for Scan.
type Query struct {
	// Namespace keeps the rows of one namespace; "" or "*" keeps all.
	Namespace string
	// Prefix keeps the rows whose id starts with it.
	Prefix string
	// Reverse lists newest first.
	Reverse bool
	// From is the Key to start at, from a page token; "" for the first.
	From string
}

// Scan decodes each row of table that q selects, in creation order (its
// byCreate index), and calls fn with it; namespace returns a row's
// namespace for q.Namespace. fn may return an error to stop, which Scan
// returns.
func Scan[T any](v projections.View, table, byCreate string, q Query, decode func(projections.Row) (T, error),
	namespace func(T) string, fn func(T) error) error {
	return Walk(v, table, byCreate, q.Prefix, q.From, q.Reverse, func(_ string, r projections.Row) error {
		x, err := decode(r)
		if err != nil {
			return err
		}
		if q.Namespace != "" && q.Namespace != "*" && namespace(x) != q.Namespace {
			return nil
		}
		return fn(x)
	})
}

// Collect decodes, in creation order, the rows of table an index lists
// under prefix.
func Collect[T any](v projections.View, table, index, prefix string, decode func(projections.Row) (T, error)) ([]T, error) {
	_, rows, err := Sorted(v, table, index, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(rows))
	for _, r := range rows {
		x, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}
