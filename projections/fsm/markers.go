package fsm

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// rebuildMarker is stored at layout.MarkerKey(name) while an operator's rebuild of
// the projection runs: a server that stops before the switch finds it on
// start (its half-built scratch store deleted by then) and runs the
// rebuild again. A
// rebuild for a version change needs no marker: the stored version still
// differs after a crash.
type rebuildMarker struct {
	Requested uint64 `msgpack:"a"` // the applied index when it was requested
}

func writeMarker(w *kv.WriteBatch, name string, m rebuildMarker) error {
	b, err := msgpack.Marshal(&m)
	if err != nil {
		return err
	}
	return w.Set(layout.MarkerKey(name), b)
}

// pendingRebuilds returns the names of the projections with a rebuild
// marker, in key order.
func pendingRebuilds(r kv.Reader) ([]string, error) {
	var names []string
	lower := []byte(layout.MarkerPrefix)
	err := r.Scan(lower, kv.PrefixEnd(lower), false, func(k, _ []byte) error {
		names = append(names, string(k[len(lower):]))
		return nil
	})
	return names, err
}
