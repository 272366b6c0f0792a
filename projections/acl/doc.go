// Package acl owns the ACL projection: policies (with the (namespace, job)
// index of policies attached to workloads, N7), tokens (with their secret
// hash and expiry indexes), roles (with a name index) and the bootstrap
// state.
//
// # Usage
//
// The FSM applies the ACL events through Projection; readers call the
// query functions (GetPolicy, TokenBySecretHash, WorkloadPolicies, …)
// with a projections.View. Resolvers watch Tables' table indexes to
// invalidate caches.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - No token secret is stored: tokens are found by the SHA-256 of their
//     SecretID (TableTokenSecrets).
//   - Every index row is written and removed in the same Apply as the row it
//     indexes, so an index never names a missing row.
//   - Reading a token drops links to roles deleted since it was written (N8).
package acl
