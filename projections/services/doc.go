// Package services owns the services projection: every instance of a
// Nomad-native service registered by the client running its allocation
// (events.ServiceRegistration), keyed by registration id, with indexes by
// (namespace, service name), by allocation and by node, and one
// key-watched row per (namespace, service name) whose modify index is the
// last change to any of the service's instances.
//
// # Usage
//
// The FSM applies ServicesRegistered and ServicesDeregistered through
// Projection. It also removes, on its own, the registrations of an
// allocation that becomes client-terminal or lost or is garbage
// collected, and of a node that goes down or is purged: the commands
// that make those changes append a ServicesDeregistered in the same entry
// (for history and the event stream), and the projection's own removal
// closes the race with a registration applied between that decision and
// its apply.
// Readers call Get, ByName, Scan, ByAlloc and ByNode with a
// projections.View; a blocking read of one service waits on the
// NameChangesTable key NameKey(namespace, name).
//
// A registration carries AllocLivePrecondition: at apply its allocation
// must still exist on the registering node and not be terminal, so a
// registration can never outlive the cleanup of its allocation.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Rows of Table are keyed by registration id and hold the
//     registration without its indexes (those are the row's).
//   - Every row has exactly one row in each of ByNameTable, ByAllocTable
//     and ByNodeTable, written and removed in the same apply.
//   - A NameChangesTable row is never deleted: a blocking reader of a
//     service whose last instance went must see the index move.
//   - A registration identical to the stored one writes nothing.
package services
