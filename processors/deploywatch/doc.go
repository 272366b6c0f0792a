// Package deploywatch owns the deployment watcher's first duty, N3: a
// leader-only processor that moves every deployment created at job
// registration from initializing to pending once it is persisted, through
// the command pipeline (job.MarkDeploymentPending, which appends
// DeploymentStatusUpdated). Until then schedulers can tell a
// registration-driven deployment from one they created, and no two writers
// overwrite each other's deployment state.
//
// # Usage
//
// Build a Watcher with New over the FSM (it reads the deployments
// projection and waits on the FSM's Notifier) and hand it to the
// supervisor; it is a supervisor.Processor.
//
// # Concurrency
//
// Run is called by one goroutine at a time; the Watcher keeps no state
// between runs.
//
// # Invariants
//
//   - State changes only through the pipeline; every decision carries the
//     deployment's modify index, so a deployment changed in between is
//     re-read, never overwritten.
//   - Each run starts with a full scan of the deployments projection (so
//     deployments a previous leader left initializing are moved), then
//     reads only deployments created since the last scan, plus those whose
//     move failed and is retried after RetryInterval.
//   - Nothing is acted on before Run starts or after it returns.
package deploywatch
