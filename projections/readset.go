package projections

import (
	"context"
	"sync/atomic"
)

// ReadSet names the tables a read uses. The API puts one in the context of
// a read of a past state, so that whatever builds that state (package
// history/timetravel) may bring forward only the projections owning those
// tables; the builder calls Stray when the read touched another table,
// whose rows it then did not hold, and the read must be done again
// without a ReadSet.
type ReadSet struct {
	// Tables are the tables the read declares.
	Tables  []string
	strayed atomic.Bool
}

type readSetKey struct{}

// WithReadSet returns ctx carrying rs.
func WithReadSet(ctx context.Context, rs *ReadSet) context.Context {
	return context.WithValue(ctx, readSetKey{}, rs)
}

// ReadSetFrom returns the ReadSet ctx carries, or nil.
func ReadSetFrom(ctx context.Context) *ReadSet {
	rs, _ := ctx.Value(readSetKey{}).(*ReadSet)
	return rs
}

// Stray records that the read touched a table outside the set.
func (rs *ReadSet) Stray() { rs.strayed.Store(true) }

// Strayed reports whether Stray was called.
func (rs *ReadSet) Strayed() bool { return rs.strayed.Load() }
