// Package storagetest owns the conformance suites every ordo store must pass:
// what hashicorp/raft relies on from a raft.LogStore and a raft.StableStore,
// and that a durable store keeps it across Close and reopen. It is imported
// by tests only.
//
// # Usage
//
// Run the suites from a store's own tests, with a function that opens a new,
// empty store on a fresh directory and registers its cleanup:
//
//	func TestConformance(t *testing.T) {
//		storagetest.LogStoreSuite(t, func(t *testing.T) raft.LogStore { return open(t, t.TempDir()) })
//		storagetest.StableStoreSuite(t, func(t *testing.T) raft.StableStore { return open(t, t.TempDir()) })
//		storagetest.PersistenceSuite(t, open) // open(t, dir) opens the store kept in dir
//	}
//
// # Concurrency
//
// The suites run their subtests one at a time; the Concurrent subtest calls
// one store from several goroutines at once, so run it under -race.
//
// # Invariants
//
// The suites check hashicorp/raft's contracts exactly as raft tests them:
//
//   - FirstIndex and LastIndex are 0 on an empty store and otherwise the
//     smallest and largest stored index, across StoreLogs (with gaps),
//     DeleteRange of a prefix (compaction) and of a suffix (truncation).
//   - GetLog of a missing index returns an error == raft.ErrLogNotFound.
//   - GetLog returns every field StoreLog was given, AppendedAt included.
//   - A missing stable key makes Get fail with the text "not found", and
//     GetUint64 return 0 with either no error or that same error.
//
// They do not check what raft does not rely on (for instance whether GetLog's
// slices alias the store's memory, which raft.InmemStore allows); stores test
// such properties themselves.
package storagetest
