// Package exec is the exec task driver: it runs a task's command as a
// process of the host, with the task's environment and working directory,
// its output in the task's log files, and re-attaches to that process
// after the client restarts. It uses no root-only feature (no cgroups,
// namespaces or chroot): tasks are not isolated from each other or from
// the host.
//
// # Usage
//
//	d, err := exec.New(exec.DefaultConfig())
//	h, err := d.Start(ctx, driver.TaskConfig{..., Config: map[string]any{
//		"command": "/usr/bin/python3",
//		"args":    []any{"-m", "http.server"},
//	}})
//	res, err := h.Wait(ctx)
//
// A task's config block takes:
//
//   - command (string, required): a path (relative paths are relative to
//     TaskConfig.Dir) or a name looked up in the task's PATH.
//   - args (list of strings): the command's arguments.
//   - memory_hard_limit (bool, default false): limit the process's
//     virtual address space (RLIMIT_AS) to the task's MemoryMB. Opt-in,
//     because address space is not memory used: Go, Java and many other
//     runtimes reserve far more address space than they touch and fail
//     under such a limit.
//
// Any other key, a missing command or a value of the wrong type is a
// *driver.ConfigError naming the key ("config.command").
//
// The process gets exactly TaskConfig.Env, plus
// PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin when
// Env has no PATH, runs in TaskConfig.Dir, and reads /dev/null as stdin.
//
// # Logs and rotation
//
// The process writes its stdout and stderr straight into
// TaskConfig.StdoutPath and StderrPath, opened with O_APPEND: no pipe runs
// through the client, so the task keeps running and logging while the
// client is down or restarting. The client rotates the files by
// copy-truncate: every LogCheckInterval a goroutine per task compares each
// file with LogMaxBytes and, once it is reached, copies it to <path>.1 and
// truncates it; thanks to O_APPEND the process's next write lands at the
// start of the emptied file. Rotated files are numbered from the newest:
//
//	<path>      the current file, being written
//	<path>.1    the newest rotated file
//	<path>.N    the oldest, N = LogMaxFiles-1; older ones are deleted
//
// so a reader (ordo alloc logs) reads <path>.N … <path>.1 then <path>
// (RotatedPath names them). LogMaxFiles counts the current file; with 1
// (or less) a full file is only truncated. A LogMaxBytes of 0 never
// rotates. The caveats of copy-truncate apply: a file can outgrow
// LogMaxBytes by what the task writes in one check interval; output
// written between the end of the copy and the truncation is lost; and
// while the client is down nothing rotates (Recover resumes it).
//
// # Stopping, signals and exit
//
// The process leads a process group of its own (Setpgid). Stop sends the
// task's KillSignal (default SIGTERM) to the whole group, waits up to
// KillTimeout (default 5s) on Config.Clock, then sends SIGKILL to the
// group, and returns once the process has exited. Signal sends to the
// main process only. When the main process exits, whatever is left of its
// group is killed. A process that moves to a group or session of its own
// (setsid, daemonizing) escapes both: only cgroups could follow it. A
// process killed by a signal reports Signal = its number and ExitCode =
// 128 + it.
//
// # Re-attaching after a client restart
//
// Handle.State records the process's pid, its start time (field 22 of
// /proc/<pid>/stat, in clock ticks since boot) and the kernel's boot id,
// with the log paths, rotation limits and kill settings. Recover accepts
// the state only if /proc/<pid>/stat shows a live (not zombie) process
// with the same start time in the same boot, so a pid recycled by an
// unrelated process is never taken for the task; otherwise it returns
// driver.ErrTaskGone. The recovered process is not this client's child,
// so its exit is found by polling /proc every PollInterval, and its exit
// status cannot be known: its ExitResult has ExitCode -1 and an Err
// wrapping ErrExitUnknown.
//
// # Resource limits
//
// Enforced: only the address-space limit of memory_hard_limit, set with
// prlimit(2) right after the process starts (a program may run a moment
// before it applies; children forked later inherit it). Not enforced:
// CPU shares, resident memory, disk, network, pids, user or filesystem
// isolation — all of which need cgroups, namespaces or root. The task's
// memory_max (TaskConfig.MemoryMaxMB) is ignored: there is no soft limit
// to raise a hard one above.
//
// # Concurrency
//
// A Driver and its handles are safe for concurrent use. Each started task
// has two goroutines owned by its handle: one waits for the process (it
// ends when the process exits) and one rotates its logs (it ends when the
// process exits or Close is called). A recovered task has a poller instead
// of the waiter, which Close also ends. Close waits for the goroutines it
// ends. Each handle has one lock, held only to signal or reap the child
// (so a reaped pid is never signalled), never across a blocking wait.
//
// # Invariants
//
//   - Start returns a handle for a started process, or an error and no
//     process (one that fails its setup after starting is killed and
//     reaped first).
//   - A process is signalled only while it is known to be the task's: an
//     unreaped child, or a pid whose start time and boot id match.
//   - Time comes from Config.Clock only.
package exec
