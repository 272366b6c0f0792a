// Package layout is how the projections lay out their state in the
// store: the keys of rows, table indexes and metadata, the header every
// row value starts with, and the writer interfaces a replay's writers
// implement so that a Tx hands them rows and decoded values. It is shared
// by the base package projections, the FSM (projections/fsm) and the
// rebuild engine (projections/rebuild), and by nothing else: the layout
// is not an API, readers go through projections.View.
//
// # Usage
//
// Build keys with RowKey, TableIndexKey, MetaKey and the rest; encode a
// row's header with EncodeRow and read it back with RowHead. A writer
// that can keep a value it is handed implements OwnedSetter; one that
// keeps decoded row values implements ValueWriter.
//
// # Concurrency
//
// Everything here is a pure function of its arguments or an interface:
// safe from any goroutine.
//
// # Invariants
//
//   - A row's key is "t/<table>\x00<key>", its table's index is at
//     "ti/<table>", a projection's metadata at "pm/<name>".
//   - A row's value starts with RowHeader bytes: its create and modify
//     index, big-endian.
//   - What is local to one server (ShadowPrefix, MarkerPrefix) never
//     travels in a raft snapshot.
package layout
