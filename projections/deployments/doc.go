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
//     per deployment.
//   - An upsert replaces the deployment whole and keeps its create index.
//   - A status update patches status and description (and, with Promote,
//     marks every group promoted) and sets ModifyTime to the entry's leader
//     time; an update of an unknown deployment changes nothing.
//   - Apply reads only the event and the Tx.
package deployments
