// Package jobplan owns the job plan (dry run): what registering a job
// would do, computed by the scheduler against the current state with the
// job overlaid, and reported in the shape of Nomad's JobPlanResponse —
// annotations per task group, failed placements, the evals it would
// create, and a field-level diff of the job.
//
// # Usage
//
//	resp, err := jobplan.Plan(view, job, jobplan.Options{Diff: true, Now: now})
//
// The HTTP API plans through a Planner (its httpapi.JobPlanner interface,
// wired by the agent), since commands may not import processors.
//
// # Concurrency
//
// Plan reads the view it is given and keeps no state; it may run
// concurrently on any views.
//
// # Invariants
//
//   - Nothing is written: the eval planned is synthetic (its id derived
//     from the job and the snapshot's index), never persisted, and the
//     scheduler's plan is discarded after it is described.
//   - The job is validated as a registration would validate it, so a plan
//     answers 400 where a register would.
//   - The plan is what a worker would compute for the registration's eval
//     on this snapshot (same State, same job version, same scheduler).
package jobplan
