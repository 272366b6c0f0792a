// Package deployment owns the deployment commands: those a user issues —
// promote (canaries), fail and pause or resume, shaped like Nomad's
// Deployment RPCs — and Progress, which records the deployment watcher's
// decisions (package deploywatch).
//
// # Usage
//
// Build a command from a decoded request and run it with
// commands.Pipeline.Run. Decide is pure: it reads the deployments, jobs
// and allocs projections and the leader time and ids it is given.
//
// Promote promotes every group with canaries (All) or the groups named;
// each must have as many healthy canaries running as it asks for, or the
// promotion is refused with ErrCanariesUnhealthy ("not all canaries are
// healthy", a 409). A promoted group's progress deadline counts from the
// promotion, and a resumed deployment's from the resumption (nothing could
// progress while it was paused). Fail marks the deployment failed and,
// when a group has auto_revert, registers the job's latest stable version
// again (Revert).
//
// A job version is stable when a deployment of it succeeded (Nomad sets
// Stable on the version then; ordo derives it from the deployments, see
// StableVersion). Revert registers that version's spec as a new version,
// with the job's modify index as a precondition, in the same entry as the
// failure, and says so in the status description as Nomad does ("… -
// rolling back to job version N", "… - no stable job version to auto
// revert to", "… - not rolling back to stable job version N as current
// job has same specification").
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
//     second user) is a 409, not a stale overwrite. A promotion also
//     carries the modify index of each canary whose health it read.
//   - Promote, fail, resume and Progress with Eval create one pending eval
//     (TriggeredBy deployment-watcher) for the deployment's job in the
//     same entry, so the scheduler acts on the change; pause creates none,
//     and a revert's registration brings its own eval instead.
//   - A request that changes nothing appends nothing.
package deployment
