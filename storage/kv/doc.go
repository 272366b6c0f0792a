// Package kv owns the Pebble database behind a server's state directory: the
// archive, the projection tables and their metadata all live in one Store so
// that an entry's events, projection updates and applied index commit in one
// batch.
//
// # Usage
//
// Open a Store, take an indexed Batch for writes that must read their own
// writes (the FSM), a Snapshot for consistent reads, and Export/Import to move
// the whole state inside a raft snapshot. To replace millions of keys at
// once (a projection rebuild's switch), write them in key order into a
// TableFile (or several, over ranges apart) and Replace: Pebble ingests the
// files, then a batch of what must land over them commits. Work that builds millions of keys only to move them
// in that way (a rebuild) writes them into a scratch store (OpenScratch):
// inside the store's directory, without a write-ahead log, shaped for a
// bulk load, deleted when closed and when its store opens. Keys are built
// with the helpers in keys.go.
// Health and WriteStalls sample the LSM (NewCollector exports both), to
// tell a write Pebble held back from one that waited for the CPU.
//
// # Concurrency
//
// A Store is safe for concurrent use. A Batch, Snapshot or TableFile
// belongs to one goroutine. Replace holds readers (Get, Scan, Snapshot,
// Checkpoint) back while it runs; an indexed Batch reads past it, so use
// one only where no Replace runs meanwhile (the FSM, which excludes it; a
// store being filled).
//
// # Invariants
//
//   - Get returns a copy the caller may keep; Scan's key and value are valid
//     only during the callback.
//   - A missing key is ErrNotFound, never a nil value with a nil error.
//   - A scratch store never outlives its process's use of it: Close deletes
//     it, and Open deletes those a stop left, once Pebble's lock is held.
//   - Stores are kept at Pebble's FormatFlushableIngest (Open moves an
//     older one there, one way): an ingest never waits for a memtable
//     flush, and Checkpoint flushes first if one may still be queued, so a
//     checkpoint always opens.
package kv
