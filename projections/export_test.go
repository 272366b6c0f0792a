package projections

import (
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/kv"
)

// ApplyEvent applies ev to p as the entry at index would, writing into w.
func ApplyEvent(w kv.Writer, p Projection, ev *events.Event, index uint64) error {
	return p.Apply(NewTx(w, index, 0), ev)
}
