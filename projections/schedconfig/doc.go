// Package schedconfig owns the operator configuration projection: the
// one row holding the cluster's SchedulerConfiguration (algorithm,
// preemption, memory oversubscription, job registration refusal, eval
// broker pause), as the last SchedulerConfigUpdated event set it, and the
// one row of the autopilot settings, as the last AutopilotConfigUpdated
// set them.
//
// # Usage
//
// The FSM applies SchedulerConfigUpdated through Projection; the API,
// the job register command, the eval feed and the scheduler read it with
// Get. A cluster that never set it reads Default. Every server's raft
// node reads GetAutopilot at each autopilot check (nil: the agent file's
// settings).
//
// # Concurrency
//
// Stateless: safe for concurrent use; each call uses the view it is given.
//
// # Invariants
//
//   - One row, key events.SchedulerConfigKey in Table; its modify index is
//     the configuration's, which ?cas compares.
//   - At most one row, key events.AutopilotConfigKey in AutopilotTable.
package schedconfig
