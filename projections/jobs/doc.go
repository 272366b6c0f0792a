// Package jobs owns the jobs projection: every job at its current version,
// every version a job has had, and a summary per job counting its
// allocations by task group and client status (and, for periodic and
// parameterized parents, their children by status).
//
// # Usage
//
// The FSM applies JobRegistered, JobDeregistered, EvalsUpserted and the
// Allocs* events through Projection; readers call Get, List, Scan (a
// paged list's walk, by namespace and id from a key, either way), Versions
// and GetSummary with a projections.View. Job, Stub and Summary marshal to JSON
// in the shape of Nomad's api.Job, api.JobListStub and api.JobSummary.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Table holds one row per job keyed Key(namespace, id): the encoded
//     JobRegistered payload of its current version. The row changes only
//     when the job's spec does (a registration that changed it, or a stop),
//     so its modify index is the job's JobModifyIndex and an EnforceIndex
//     registration is a ModifyIndex precondition on it.
//   - VersionsTable keeps every version under VersionKey(namespace, id,
//     version); a purge removes the job, its versions and its summary.
//   - A stop (JobDeregistered without Purge) sets Stop and bumps Version at
//     apply, from the row it finds.
//   - Summaries are counted from the events' own fields only: AllocsTable
//     remembers, per allocation, its job, group and last client status, so
//     a client update moves one count from the old status to the new one.
//     An allocation of an earlier incarnation of a purged job (a different
//     job create index) is never counted against the new one.
//   - Apply reads only the event and the Tx, iterates no map unordered
//     where order matters, and writes a row only when it changed (N15).
package jobs
