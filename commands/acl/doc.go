// Package acl owns the ACL commands (bootstrap, policies, roles, tokens and
// the expiry of tokens) and the Resolver that turns a request's token into
// a compiled policy.ACL for the HTTP API.
//
// # Usage
//
// Handlers mint a token's AccessorID and SecretID at the edge (NewSecret),
// build a command carrying only the secret's hash (HashSecret) and run it
// with commands.Pipeline.Run. The API authorizes each request with
// Resolver.Resolve(secret), which answers an Identity from a cache that the
// ACL tables' indexes invalidate. A WorkloadIdentityVerifier, when set,
// lets workload identity JWTs resolve to the policies attached to their
// workload (N7).
//
// # Concurrency
//
// Commands are values and Decide is pure. Resolver is safe for concurrent
// use; its cache is guarded by one mutex.
//
// # Invariants
//
//   - A SecretID never enters a command, an event or a projection: only
//     its SHA-256 does (declared Sensitive on the event).
//   - Role links are stored as ids, deduplicated, and must exist at
//     creation (N8); policies and roles a token links must exist.
//   - Expiry is decided from leader time: a token's ExpirationTime is the
//     leader's now plus its TTL, and ExpireTokens deletes only tokens
//     expired at the entry's time (N10).
package acl
