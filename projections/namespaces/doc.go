// Package namespaces owns the namespaces projection: every namespace with its
// description, metadata and the indexes of the entries that created and last
// changed it.
//
// # Usage
//
// The FSM applies NamespaceUpserted and NamespaceDeleted events through
// Projection; readers call Get and List with a projections.View.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Rows live in table Table keyed by name; the table index moves only when
//     a row is written or an existing row removed.
package namespaces
