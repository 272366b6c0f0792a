package variables

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/projections"
)

// Get returns the variable at path in namespace ns, or
// projections.ErrNotFound.
func Get(v projections.View, ns, path string) (*Variable, error) {
	k := Key(ns, path)
	pr, err := v.Get(Table, k)
	if err != nil {
		return nil, err
	}
	return fromRow(k, pr)
}

// Query selects variables for Scan.
type Query struct {
	// Namespace keeps one namespace's variables; AllNamespaces keeps all.
	Namespace string
	// Prefix keeps the variables whose path starts with it.
	Prefix string
	// From is the Key(namespace, path) to start at, inclusive; "" for the
	// first (the last when Reverse is set).
	From string
	// Reverse lists in descending namespace and path order.
	Reverse bool
}

// Scan calls fn with each variable q selects, by namespace then path
// (descending when q.Reverse is set); fn may return an error to stop,
// which Scan returns.
func Scan(v projections.View, q Query, fn func(*Variable) error) error {
	scan := Key(q.Namespace, q.Prefix)
	if q.Namespace == AllNamespaces {
		scan = ""
	}
	return v.ScanFrom(Table, scan, q.From, q.Reverse, func(k string, pr projections.Row) error {
		if q.Namespace == AllNamespaces {
			if _, path := SplitKey(k); !strings.HasPrefix(path, q.Prefix) {
				return nil
			}
		}
		vr, err := fromRow(k, pr)
		if err != nil {
			return err
		}
		return fn(vr)
	})
}

// UsageOf returns what namespace ns's variables store; the zero Usage when
// it has none.
func UsageOf(v projections.View, ns string) (Usage, error) {
	pr, err := v.Get(UsageTable, ns)
	if errors.Is(err, projections.ErrNotFound) {
		return Usage{}, nil
	} else if err != nil {
		return Usage{}, err
	}
	var u Usage
	if err := msgpack.Unmarshal(pr.Value, &u); err != nil {
		return Usage{}, fmt.Errorf("decode usage of %q: %w", ns, err)
	}
	return u, nil
}

// ByKey calls fn with the namespace and path of every variable encrypted
// with keyID, in namespace then path order.
func ByKey(v projections.View, keyID string, fn func(ns, path string) error) error {
	return ByKeyAfter(v, keyID, "", fn)
}

// ByKeyAfter is ByKey starting after the variable whose Key(namespace,
// path) is after ("" for the first), so a caller paging through a large
// key's variables does not scan again what it has already seen (nor the
// tombstones its own rewrites left there).
func ByKeyAfter(v projections.View, keyID, after string, fn func(ns, path string) error) error {
	from := ""
	if after != "" {
		from = keyID + "\x00" + after + "\x00" // after's immediate successor
	}
	return v.ScanFrom(ByKeyTable, keyID+"\x00", from, false, func(k string, _ projections.Row) error {
		ns, path := SplitKey(k[len(keyID)+1:])
		return fn(ns, path)
	})
}
