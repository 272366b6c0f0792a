// Package kv owns the Pebble database behind a server's state directory: the
// archive, the projection tables and their metadata all live in one Store so
// that an entry's events, projection updates and applied index commit in one
// batch.
//
// # Usage
//
// Open a Store, take an indexed Batch for writes that must read their own
// writes (the FSM), a Snapshot for consistent reads, and Export/Import to move
// the whole state inside a raft snapshot. Keys are built with the helpers in
// keys.go.
//
// # Concurrency
//
// A Store is safe for concurrent use. A Batch or Snapshot belongs to one
// goroutine.
//
// # Invariants
//
//   - Get returns a copy the caller may keep; Scan's key and value are valid
//     only during the callback.
//   - A missing key is ErrNotFound, never a nil value with a nil error.
package kv
