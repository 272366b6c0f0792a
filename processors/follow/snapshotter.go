package follow

import "github.com/ordoplane/ordo/storage/kv"

// Snapshotter opens point-in-time, read-only snapshots of the state store;
// *kv.Store implements it. A processor that reads the store without
// following it (the eval feed, the keyring, the scheduler's state) takes
// one instead of the *kv.Store, so it has no way to write.
type Snapshotter interface {
	Snapshot() *kv.Snapshot
}

var _ Snapshotter = (*kv.Store)(nil)
