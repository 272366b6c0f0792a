// Package eventstest owns helpers for tests that build, encode and compare
// events: a fully populated sample payload of every registered event type,
// and constructors that fail the test instead of returning errors. It is
// imported by tests only.
//
// # Usage
//
//	ev := eventstest.New(t, "ev-1", &events.NamespaceDeleted{Name: "web"})
//	data := eventstest.EncodeEntry(t, &events.Entry{CommandID: "c1", Events: []events.Event{ev}})
//	for name, p := range eventstest.Samples() { … }
//
// # Concurrency
//
// Every function may be called from any goroutine; Samples returns fresh
// values on each call.
//
// # Invariants
//
//   - Samples has exactly one payload per registered type, at its current
//     version, with every field set to a non-zero value, so codec and
//     golden tests notice a field that does not survive.
package eventstest
