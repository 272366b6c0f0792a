// Package job owns the job commands: register (with Nomad's EnforceIndex
// check-and-set), deregister (stop or purge) and dispatch of parameterized
// jobs, shaped like Nomad's Job RPCs, and the move of a deployment created
// at registration from initializing to pending (N3). Package jobspec, under
// it, turns HCL and Nomad's API JSON into the canonical events.Job.
//
// # Usage
//
// Build a command (a pointer: Decide records what it decided) and run it
// with commands.Pipeline.Run; afterwards Result says which evaluation,
// deployment or dispatched job it created:
//
//	cmd := &job.Register{Job: *spec}
//	out, err := pipeline.Run(ctx, "job.register", req, cmd)
//	evalID := cmd.Result().EvalID
//
// # Concurrency
//
// A command value is used by one goroutine. Decide is pure: it reads the
// projections through the view, the leader time and the ids it is given,
// and writes only the command's own result.
//
// # Invariants
//
//   - A registration bumps the job's version only when its spec changed
//     (canonical encodings compared without Version and SubmitTime); an
//     unchanged one appends only an evaluation for the current version.
//   - Every decision carries the job row's modify index as a precondition
//     (0: the job must not exist), so two racing registrations never give
//     one version twice; with EnforceIndex the caller's index is that
//     precondition and a mismatch is a 409 before anything is appended.
//   - The job, its evaluation and (for service jobs with an update
//     strategy whose version changed) its deployment, in state
//     initializing, are appended in one entry (N3). Periodic and
//     parameterized jobs get no evaluation.
//   - Evaluations created in the same entry as the job change they
//     evaluate carry JobModifyIndex 0: that change's index is the entry's
//     own index, which is the eval's create index. An evaluation of an
//     unchanged job carries the job's JobModifyIndex.
//   - Invalid requests are *commands.ValidationError naming the field and
//     append nothing.
package job
