// Package raftstore owns the durable state of a hashicorp/raft node: its log
// entries and its stable keys (current term, last vote), kept together in one
// Pebble database. Store implements both raft.LogStore and raft.StableStore.
//
// # Usage
//
// Open a Store on a directory of its own and hand it to raft.NewRaft as both
// the LogStore and the StableStore; Close it after raft has shut down:
//
//	st, err := raftstore.Open(dir, raftstore.DefaultConfig())
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	r, err := raft.NewRaft(conf, fsm, st, st, snaps, trans)
//
// Log entries live under "l" followed by the 8-byte big-endian index, so they
// sort by index; stable keys live under "s" followed by the key. Entries are
// encoded with the compact binary format in codec.go.
//
// # Concurrency
//
// A Store is safe for concurrent use. Writers of log entries (StoreLog,
// StoreLogs, DeleteRange) are serialised by writeMu so that the cached first
// and last index follow commit order; readers take only mu, briefly, and are
// never blocked behind a sync. Lock order: writeMu, then mu. Right after a
// DeleteRange commits, FirstIndex may for a moment still return an index it
// deleted, as raft's readers allow for. Close must be the last call: Pebble
// panics on use after Close.
//
// # Invariants
//
//   - Unless Config.NoSync is set, every write is synced (pebble.Sync) before
//     it returns, and StoreLogs writes all of its entries in one batch: after
//     a crash either all of them are there or none is.
//   - FirstIndex and LastIndex are the smallest and largest stored index, 0 on
//     an empty store, and stay so across DeleteRange and reopening.
//   - GetLog of a missing index returns exactly raft.ErrLogNotFound, unwrapped.
//   - Get and GetUint64 of a missing stable key return ErrKeyNotFound, whose
//     text is exactly "not found" (raft compares the text); GetUint64 then
//     returns 0. Uint64 values are 8 bytes big-endian.
//   - GetLog and Get return memory the caller owns; StoreLogs and Set copy
//     their arguments before returning.
package raftstore
