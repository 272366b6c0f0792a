package fsm

import "github.com/ordoplane/ordo/storage/kv"

// ReadSnapshot opens a point-in-time, read-only view of the state store:
// what a processor reads through follow.State, which hands out no way to
// write. The caller closes it.
func (f *FSM) ReadSnapshot() *kv.Snapshot { return f.store.Snapshot() }
