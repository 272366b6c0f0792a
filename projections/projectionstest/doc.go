// Package projectionstest owns helpers for tests of the FSM and the
// projections: a state store on a temporary directory, an FSM over it with
// every projection, and raft log entries built from payloads, so tests
// drive FSM.Apply exactly as raft does without running raft. It is imported
// by tests only.
//
// # Usage
//
//	store := projectionstest.OpenStore(t)
//	fsm := projectionstest.NewFSM(t, store)
//	e := projectionstest.Entry(t, "cmd-1", &events.NamespaceUpserted{…})
//	res := projectionstest.Apply(t, fsm, projectionstest.Log(t, 1, e))
//
// RandomLogs and ApplyInBatches drive an FSM through a random history of
// namespace and server changes, in raft batches of random size; Rebuilt
// rebuilds every projection from a store's archive into a new store, to
// compare with the live one (Checksums).
//
// # Concurrency
//
// The helpers hold no state; an FSM they return is used as raft uses one,
// from one goroutine at a time.
//
// # Invariants
//
//   - Entries are deterministic: event ids derive from the command id and
//     the event's position, and the leader time is fixed unless set.
//   - Everything opened is closed by the test's cleanup.
package projectionstest
