package projections

import "github.com/ordoplane/ordo/events"

// Projection is a read model derived from events.
type Projection interface {
	// Name identifies the projection in metadata and checksums.
	Name() string
	// Version changes when the projection's stored shape changes; a stored
	// projection of another version must be rebuilt.
	Version() int
	// Tables lists the tables the projection owns.
	Tables() []string
	// Apply applies one event; it ignores event types it does not use. It
	// must be deterministic.
	Apply(tx *Tx, ev *events.Event) error
}

// Names returns the names of projs, in order.
func Names(projs []Projection) []string {
	out := make([]string, len(projs))
	for i, p := range projs {
		out[i] = p.Name()
	}
	return out
}
