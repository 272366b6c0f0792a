// Package variables owns the variables projection: every variable's
// encrypted items with the id of the root key that sealed them, its create
// and modify indexes and times, the stored bytes and count of variables
// per namespace (N13), and an index of variables by key id (for a full key
// rotation, N12, and the keyring's garbage collection).
//
// # Usage
//
// The FSM applies VariableUpserted and VariableDeleted through Projection.
// Readers call Get, Scan, Usage and ByKey with a projections.View. A
// command that writes a variable carries a QuotaPrecondition: the quota
// check registered here decides at apply, against the usage and the
// namespace's VariablesQuota at that moment, whether the write fits.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Rows of Table are keyed Key(namespace, path) and hold only
//     ciphertext: the projection never sees a clear item.
//   - UsageTable holds, per namespace with at least one variable, the sum
//     of Size over its variables and their count, updated in the same
//     apply as the variable (so a rebuild computes the same usage).
//   - Apply reads only the projection's own tables; the quota check reads
//     the namespaces table too, as preconditions may.
package variables
