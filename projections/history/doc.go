// Package history owns the entity history projection: for every archived
// event, one row per entity the event touches, so "every event that
// touched alloc X" is a prefix scan rather than a scan of the archive.
//
// A row's key is
//
//	<kind>\x00<id>\x00<index, 20 digits>\x00<seq, 10 digits>
//
// written from the event's Keys alone, with no payload decode; its value is
// empty. The zero-padded decimal position sorts rows of one entity in
// commit order. A job is a namespaced entity: its id here is
// "<namespace>/<job id>", from the namespace and job keys the event
// carries (events about a job always carry both). Every other kind uses the
// key's value as is.
//
// Timeline answers the API's questions about one entity: its events in
// commit order (or reverse), bounded by index and leader time, paged, each
// with a one-line summary and the fields it changed (package summary).
// Times are read from the archived events, so a time bound scans the
// entity's rows and reads each event once.
//
// # Usage
//
// The FSM applies every event through Projection. Readers call Exists,
// Scan or Timeline with a projections.View over a snapshot (the archive
// lives in the same store).
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Rows are only ever added: an entity deleted keeps its history.
//   - Apply reads nothing and decodes no payload; a rebuild from the
//     archive writes the same rows (the rebuild-equals-live checksum).
//   - The table index moves with every entry that archived an event with
//     keys, so blocking reads on Table wake on any entity's change.
package history
