// Package driver defines how the client runs a task: the Driver interface
// every task driver implements (exec runs a real process, mock simulates
// one), the task configuration a driver is given, and the handle through
// which the client waits for, signals, stops and re-attaches to a running
// task.
//
// # Usage
//
// The client looks a driver up by the task's driver name, calls Start with
// a TaskConfig, persists Handle.State() so that a restarted client can call
// Recover with it, and calls Wait and Stop on the handle. Drivers live in
// sub-packages (driver/exec, driver/mock) and register nothing globally:
// the client builds its own map of drivers.
//
// # Concurrency
//
// A Driver is safe for concurrent use. A Handle's Wait may be called from
// any number of goroutines; Stop and Signal are safe to call concurrently
// with Wait and with each other.
//
// # Invariants
//
//   - Start either returns a Handle for a task that was started, or an
//     error and nothing running.
//   - Wait returns once, with the same ExitResult for every caller, when the
//     task has exited (or was found gone on Recover).
//   - Stop delivers the task's kill signal, waits up to its kill timeout,
//     then kills it outright; it returns when the task has exited.
//   - Recover never starts a task: it re-attaches to one still running, or
//     returns ErrTaskGone.
package driver
