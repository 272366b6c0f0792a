// Package mock is a task driver that runs no process: a simulated task
// follows its config block, on a clock the caller provides, for the tests
// and simulations of the client and scheduler (as Nomad's mock_driver).
//
// # Usage
//
//	d, err := mock.New(mock.Config{Clock: clock}) // default: real time
//	h, err := d.Start(ctx, driver.TaskConfig{..., Config: map[string]any{
//		"run_for":   "30s",
//		"exit_code": 2,
//	}})
//
// A task's config block takes:
//
//   - run_for (duration string, default "0s"): the task exits this long
//     after it started; 0 exits at once.
//   - exit_code (number, default 0): the code it then exits with.
//   - start_error (string): Start fails with this message (after
//     start_block_for); nothing runs.
//   - start_block_for (duration string): Start blocks this long, or until
//     its context ends.
//   - kill_after (duration string, default 0): the task ignores its kill
//     signal this long after receiving it, then dies of it. Past the
//     kill timeout, Stop kills it with SIGKILL first.
//   - stdout_string (string): written to StdoutPath when the task starts,
//   - stdout_repeat (number, default 0): … then this many more times,
//   - stdout_repeat_duration (duration string): … this far apart, while
//     the task runs.
//
// Any other key, or a value of the wrong type, is a *driver.ConfigError
// naming the key. Signals: SIGKILL ends a task at once; its kill signal
// (TaskConfig.KillSignal, default SIGTERM) ends it kill_after later; any
// other signal is ignored. A task that dies of a signal reports it as
// Signal and 128 + it as ExitCode. Output is appended to StdoutPath and
// never rotated; stderr is left empty.
//
// # Recover
//
// The handle state holds run_for, exit_code, kill_after and the kill
// settings; with HandleState.Started that makes Recover deterministic: the
// task is running until Started + run_for by the driver's clock, and then
// exits with exit_code; at or after that instant Recover returns
// driver.ErrTaskGone. A recovered task writes no more output, and a kill
// signal received before the restart is forgotten.
//
// # Concurrency
//
// A Driver and its handles are safe for concurrent use. Each task has one
// goroutine, owned by its handle, that plays it and ends when the
// simulated task exits (on run_for, Stop or SIGKILL).
//
// # Invariants
//
//   - Time comes from Config.Clock only: with a fake clock or inside a
//     testing/synctest bubble, a task's exit, output and kill happen at
//     exact, reproducible instants.
//   - A task ends exactly once, and every Wait sees the same ExitResult.
package mock
