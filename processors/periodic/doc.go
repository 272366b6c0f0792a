// Package periodic owns the periodic launcher: a leader-only processor
// that launches the children of periodic batch and sysbatch jobs on their
// cron schedules, as Nomad's periodic dispatcher does.
//
// # Usage
//
// Next computes a periodic job's next launch after a time: the earliest
// next time of its cron specs (`cron`, or each of `crons`), in its time
// zone. Specs are read by jobspec.ParseCron, as registration validated
// them, which reads them as Nomad does (hashicorp/cronexpr): five fields,
// six (a year appended), seven (a second prepended too), or @hourly,
// @daily, @weekly, @monthly, @yearly and @annually. Build a Launcher with New over the FSM and
// the command pipeline and hand it to the supervisor; it is a
// supervisor.Processor. Each launch is a job.LaunchPeriodic command: the
// child "<parent>/periodic-<unix seconds>", a copy of the parent with
// Periodic cleared and ParentID set, registered with its own evaluation.
//
// # Concurrency
//
// Run is called by one goroutine at a time; the Launcher keeps no state
// between runs. Next is a pure function, safe anywhere.
//
// # Invariants
//
//   - State changes only through the pipeline. A launch names its child
//     for its launch time and requires the child not to exist, so a launch
//     decided twice (a retry, or a new leader repeating an old one)
//     registers one child.
//   - Each run reads every periodic job from the jobs projection when it
//     starts and again whenever the jobs table changes; a job's schedule is
//     recomputed from the current time when its spec changes
//     (JobModifyIndex), so launches missed while no server led are skipped,
//     not made up.
//   - With ProhibitOverlap, a launch while a previous child is pending or
//     running is skipped (decided by the command on the snapshot).
//   - Time comes from the Clock in Config; nothing is launched before Run
//     starts or after it returns.
package periodic
