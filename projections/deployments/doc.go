// Package deployments owns the deployments projection: every deployment
// with its status and per-group progress, indexed by job and by creation
// order so lists come oldest first (N20).
//
// # Usage
//
// The FSM applies DeploymentUpserted and DeploymentStatusUpdated through
// Projection; readers call Get, Resolve, Scan, ByJob and Latest with a
// projections.View. Deployment marshals to JSON as Nomad's api.Deployment.
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - Table holds one row per deployment keyed by id (events.Deployment
//     encoded with events.Marshal); ByJobTable ("<ns>\x00<job>\x00<id>")
//     and ByCreateTable (order.Key(create index, id)) hold exactly one row
//     per deployment; JobCreateTable one 8-byte big-endian index per job
//     registered and not purged.
//   - An upsert replaces the deployment whole and keeps its create index.
//   - A deployment created initializing (by its job version's
//     registration, in the same entry) gets the entry's index as its
//     JobModifyIndex and JobSpecModifyIndex, and as its JobCreateIndex
//     when it has none (a new job). One created otherwise (by the
//     scheduler) without a JobCreateIndex gets its job's create index from
//     JobCreateTable, which holds per job the index of its first
//     JobRegistered since its last purge.
//   - A status update patches status and description (with Promote, marks
//     the groups named promoted, every group when none is named; with
//     RequireProgressBy, sets those groups' deadlines) and sets ModifyTime
//     to the entry's leader time; an update of an unknown deployment
//     changes nothing.
//   - ActiveOp, UnpausedOp and CanariesHealthyOp are the preconditions of
//     a user's change to a deployment (checks.go).
//   - A deployment replaced whole (DeploymentUpserted) keeps the stored
//     status and description when it is finished, or paused and the
//     replacement would run it: an expander completes the event at apply
//     (keepstatus.go), so a processor's earlier copy never undoes a user's
//     pause or fail, and the archive holds what was applied.
//   - Apply reads only the event and the Tx.
package deployments
