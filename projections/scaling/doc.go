// Package scaling owns the scaling events projection: per job, the
// scaling requests recorded against each of its task groups (Nomad's
// scaling events, shown by GET /v1/job/:id/scale), newest first.
//
// # Usage
//
// The FSM applies JobScaled (recording an event) and a purging
// JobDeregistered (dropping the job's events); readers call Events.
// Scaling policies are not stored here: they are the task groups'
// scaling blocks, read from the jobs projection (Policies).
//
// # Concurrency
//
// Stateless: safe for concurrent use.
//
// # Invariants
//
//   - Rows live in table Table keyed by jobs.Key(namespace, job id); each
//     keeps at most MaxEvents events per group, newest first, as Nomad.
//   - An event's CreateIndex is the index of the entry that recorded it.
package scaling
