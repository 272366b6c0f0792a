package fsm

import (
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// discardShadow deletes the whole shadow keyspace.
func discardShadow(store *kv.Store) error {
	lower := []byte(layout.ShadowPrefix)
	return store.DeleteRange(lower, kv.PrefixEnd(lower), false)
}

// withoutLocal hides what is local to a server (layout.IsLocal) from a
// raft snapshot's export.
type withoutLocal struct{ r kv.Reader }

func (l withoutLocal) Get(k []byte) ([]byte, error) { return l.r.Get(k) }

func (l withoutLocal) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return l.r.Scan(lower, upper, reverse, func(k, v []byte) error {
		if layout.IsLocal(k) {
			return nil
		}
		return fn(k, v)
	})
}
