package commandstest

import (
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

// Cluster is a state store fed through the FSM (every projection), as a
// server writes it, for tests that decide commands against it and apply
// the decisions.
type Cluster struct {
	T     testing.TB
	Store *kv.Store
	FSM   *fsm.FSM
	// Index is the index of the last entry applied.
	Index uint64
}

// NewCluster returns a Cluster over a new temporary store.
func NewCluster(t testing.TB) *Cluster {
	store := pt.OpenStore(t)
	return &Cluster{T: t, Store: store, FSM: pt.NewFSM(t, store)}
}

// View returns a view over a snapshot of the store, closed when the test
// ends.
func (c *Cluster) View() projections.View {
	snap := c.Store.Snapshot()
	c.T.Cleanup(func() { snap.Close() })
	return projections.NewView(snap)
}

// Apply applies dec as the next entry (ApplyDecision) and returns its
// result.
func (c *Cluster) Apply(dec commands.Decision) fsm.Result {
	c.T.Helper()
	c.Index++
	return ApplyDecision(c.T, c.FSM, c.Index, dec)
}
