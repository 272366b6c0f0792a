// Package deploywatch owns the deployment watcher: the leader-only
// processor that moves deployments along, Nomad's way, through the command
// pipeline.
//
//   - N3: a deployment created at job registration is moved from
//     initializing to pending once it is persisted (job.MarkDeploymentPending,
//     which appends DeploymentStatusUpdated), in an entry of its own, so
//     schedulers can tell a registration-driven deployment from one they
//     created and no two writers overwrite each other's state.
//   - Progress (decide.go): for every other active deployment, Decide
//     counts per group the allocations placed under it and those the
//     client reported healthy (AllocDeploymentStatus.Healthy, through the
//     client's alloc update) or unhealthy, keeps RequireProgressBy at the
//     last progress plus progress_deadline, and decides: running (from
//     pending), successful (every group has DesiredTotal healthy
//     allocations of its version and is promoted if it placed canaries),
//     failed (an unhealthy allocation, or a progress deadline passed), an
//     automatic promotion (auto_promote once every canary is healthy), or
//     cancelled (the job stopped or has a newer version). A failure of a
//     group with auto_revert reverts the job to its latest stable version,
//     the latest whose deployment succeeded (deployment.Revert), in the
//     same entry. The decision is recorded with deployment.Progress, which
//     also asks for an eval when allocations became healthy, so the
//     scheduler rolls the next ones.
//
// Decide is a pure function of the deployment, its job, the job's
// versions and allocations, and the watcher's clock; the Watcher only
// reads, submits and logs (deployment_id, job_id) and counts
// (ordo_deploywatch_active_deployments, ordo_deploywatch_decisions_total
// by outcome).
//
// Unlike Nomad, an unhealthy allocation fails the deployment even when
// the group has a progress_deadline (Nomad then lets it be rescheduled
// and only the deadline fails the deployment). A deployment whose job was
// purged is left as it is.
//
// # Usage
//
// Build a Watcher with New over the FSM (it reads the projections and the
// archive and waits on the FSM's Notifier) and hand it to the supervisor;
// it is a supervisor.Processor. Tests give it a Clock.
//
// # Concurrency
//
// Run is called by one goroutine at a time; the Watcher keeps no state
// between runs besides its metrics.
//
// # Invariants
//
//   - State changes only through the pipeline; every decision carries the
//     deployment's modify index, so a deployment changed in between is
//     re-read and decided again, never overwritten.
//   - Each run starts with a full scan of the deployments projection (so
//     deployments a previous leader left are picked up), then follows the
//     archive from the index it scanned at, deciding again about the
//     deployments whose deployment, job or allocations changed, whose
//     progress deadline came, or whose command failed (after
//     RetryInterval).
//   - Deciding again on an unchanged deployment decides nothing.
//   - Nothing is acted on before Run starts or after it returns.
package deploywatch
