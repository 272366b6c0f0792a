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
//     changes. A user's promote, pause, resume and fail are patches
//     (DeploymentStatusUpdated: status, description, promoted groups,
//     restarted progress deadlines) whose preconditions are what the
//     user's intent depends on — the deployment still in progress
//     (deployments.Active), for a promotion not paused and each group's
//     canaries still healthy (deployments.Unpaused, CanariesHealthy) —
//     never its modify index, which the watcher and the scheduler move as
//     they count: the user's change applies over their bookkeeping, and
//     is a 409 only when its reason is gone (the deployment finished, a
//     canary turned unhealthy). Progress, the watcher's whole replacement,
//     carries the modify index it decided on, so it never overwrites a
//     change it did not see; it decides again.
//   - Promote, fail, resume and Progress with Eval create one pending eval
//     (TriggeredBy deployment-watcher) for the deployment's job in the
//     same entry, so the scheduler acts on the change; pause creates none,
//     and a revert's registration brings its own eval instead.
//   - A request that changes nothing appends nothing.
package deployment
