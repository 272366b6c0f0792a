// Package evals owns the evaluations projection: every evaluation, with a
// secondary index by job and one by creation order, so lists come oldest
// first (N20) and related evals (N17) resolve by id.
//
// # Usage
//
// The FSM applies EvalsUpserted and EvalsDeleted through Projection;
// readers call Get, Resolve, Scan, ByJob and Related with a
// projections.View. Eval and Stub marshal to JSON in the shape of Nomad's
// api.Evaluation and api.EvaluationStub.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Table holds one row per eval keyed by id (events.Evaluation encoded
//     with events.Marshal); ByJobTable holds "<ns>\x00<job>\x00<id>" and
//     ByCreateTable holds order.Key(create index, id) for every row, and
//     nothing else: deleting an eval deletes its index rows.
//   - An upsert keeps the row's create index; the row's fields are the
//     event's, whole, but JobModifyIndex: a new eval that (de)registers its
//     job without one gets the entry's index (CommittedJobModifyIndex), and
//     a write-back without one keeps the stored one.
//   - Apply reads only the event and the Tx.
package evals
