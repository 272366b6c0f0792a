// Package backup saves a server's whole state to a snapshot file and
// restores one into a cluster: `ordo operator snapshot save|restore|
// inspect` and GET/PUT /v1/operator/snapshot (Nomad's `nomad operator
// snapshot`). The file format is storage/snapshots'.
//
// A save writes what a raft snapshot carries — the archive, every
// projection and their metadata — from one consistent snapshot of the
// state store, at its applied index. A restore reads the file whole and
// checks it (format, order, counts, checksum) before any of it reaches
// raft, then installs it through raft's user restore: the leader's FSM
// replaces its store with the file's rows at a new raft index past the
// log, and every follower installs the same state by a snapshot install,
// so the cluster serves the saved state at that index and goes on from
// there. Projections saved at another version are rebuilt from the
// restored archive by the FSM before it serves them.
//
// # Usage
//
//	h, err := backup.Save(w, store.Snapshot(), backup.SaveOptions{…})
//
//	r := backup.NewRestorer(backup.RestoreConfig{Node: node, Dir: scratch, Restored: sup.Restart})
//	res, err := r.Restore(ctx, body)   // a bad file: an error wrapping ErrInvalid, nothing installed
//
// # Concurrency
//
// Save may run concurrently with anything (it reads a snapshot). A
// Restorer runs one restore at a time; others wait for it.
//
// # Invariants
//
//   - A restore installs nothing unless the whole file checked out.
//   - A restore writes nothing to the event log: it replaces the state,
//     archive included, with the saved one, as Nomad's does. The
//     history after the saved index and before the restore index is the
//     restored cluster's no longer: the archive holds the saved events,
//     then those appended after the restore.
//   - A restore is recorded in every server's log output and metrics.
package backup
