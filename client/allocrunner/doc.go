// Package allocrunner runs one allocation on a client: it builds the
// allocation's directory, runs each task of its group through the task's
// driver, restarts tasks under the group's restart policy, records task
// states and events, derives the allocation's client status, decides its
// deployment health, kills its tasks when the servers stop it, and
// persists all of it so a restarted client re-attaches instead of
// starting anything again.
//
// # Usage
//
//	r, err := allocrunner.New(allocrunner.Config{Alloc: a, Job: job, Drivers: drivers,
//		Root: filepath.Join(dataDir, "alloc"), Store: store, OnChange: notify})
//	go r.Run(ctx)          // the client owns the goroutine and joins it
//	r.Update(a2, nil)      // the servers' newer view: a stop kills the tasks
//	u, version := r.ClientUpdate()
//
// After a client restart, pass the stored record as Config.Restored (and
// the allocation as the servers last sent it): tasks with a stored handle
// are re-attached with the driver's Recover; tasks gone are reported with
// a "task lost while the client was down" event and restarted per the
// restart policy.
//
// The pure parts are exported for tests and tools: DecideRestart (Nomad's
// restart policy: attempts within interval, delay with jitter, mode fail
// or delay), ClientStatus (pending → running → complete or failed) and
// DecideHealth (healthy after min_healthy_time, and once the service
// checks pass with health_check "checks"; unhealthy on a failure or past
// healthy_deadline).
//
// Config.Services (client/services) gets a ServiceHook per allocation
// (services.go): told of every task change, it registers the services of
// running tasks, deregisters them before a kill's shutdown delay, answers
// whether the checks pass, and restarts a task for check_restart through
// RestartUnhealthy (Restart Signaled, then the restart policy, which
// counts it).
//
// # Task lifecycle
//
// pending (Received, Task Setup) → running (Started) → on exit,
// Terminated (exit code, signal) and the restart policy: Restarting
// (pending for its delay, then the next attempt), Not Restarting (dead,
// failed: the other tasks are killed with Sibling Task Failed), or dead
// (a batch task that exited 0). A stop: Killing, then the task's
// shutdown_delay (skipped with DesiredTransition.NoShutdownDelay, N23),
// then the driver's Stop (kill_signal, kill_timeout, SIGKILL), Killed.
// A user's restart (Restart): Restart Signaled, the driver's Stop,
// Terminated, Restarting with no delay, not counted by the restart
// policy. A user's signal (Signal): Signaling, then the driver's Signal.
// Exec runs a command beside a running task through its driver.
//
// # Concurrency
//
// A Runner's methods are safe for concurrent use. Run owns one goroutine
// per task, one per running task's Wait, and one health watcher; it joins
// them all before returning. Locks: the runner's mu guards the record (and
// is held across its store write, so records are written in order); a
// task runner's mu guards its kill request. A task runner's mu is never
// taken while holding the runner's.
//
// # Invariants
//
//   - A start attempt (alloc, task, restart count) is stored as starting
//     before the driver is asked to start it, and is never started again:
//     a restarted client that finds it starting without a handle counts
//     it lost and moves to the next attempt.
//   - Every change of what the client reports bumps the version
//     ClientUpdate returns and calls OnChange after the record is stored.
//   - Time comes from Config.Clock only.
package allocrunner
