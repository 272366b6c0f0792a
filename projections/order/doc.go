// Package order keys rows by creation: the secondary index tables that list
// evaluations, allocations and deployments oldest first (N20) hold one row
// per entity under Key(create index, id), and list pages resume at such a
// key, which API callers see as a Token.
//
// # Usage
//
// A projection writes Key(row.CreateIndex, id) into its "…_by_create"
// table when it creates a row and deletes it with the row; readers walk the
// table with projections.View.ScanFrom and turn the next key into a token
// with Token, and a token back into a key with ParseToken.
//
// # Concurrency
//
// Pure functions.
//
// # Invariants
//
//   - Keys sort by create index, then id: the order in which entities were
//     created, ties (one entry creating several) broken by id.
//   - ParseToken(Token(k)) == k for every key made by Key.
package order
