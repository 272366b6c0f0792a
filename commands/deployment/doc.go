// Package deployment owns the deployment commands a user issues: promote
// (canaries), fail and pause or resume, shaped like Nomad's Deployment RPCs.
//
// # Usage
//
// Build a command from a decoded request and run it with
// commands.Pipeline.Run. Decide is pure: it reads the deployments
// projection and the leader time and ids it is given.
//
// # Concurrency
//
// Commands are values; Decide is pure.
//
// # Invariants
//
//   - Only an active deployment (initializing, pending, running, paused)
//     changes; every decision carries the deployment's modify index as a
//     precondition, so a change in between (the watcher completing it, a
//     second user) is a 409, not a stale overwrite.
//   - Promote, fail and resume create one pending eval (TriggeredBy
//     deployment-watcher) for the deployment's job in the same entry, so
//     the scheduler acts on the change; pause creates none.
//   - A request that changes nothing appends nothing.
package deployment
