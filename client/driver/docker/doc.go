// Package docker is the docker task driver: it runs a task as a container
// of a Docker daemon, through the Engine API (version 1.41, Docker 20.10
// and later) over the daemon's unix socket, with the same Driver and
// Handle contracts as exec: the task's environment and directories, its
// output in the task's log files, stop with the kill signal and timeout,
// and re-attachment after the client restarts.
//
// The API client is a small typed one over net/http (api.go): the dozen
// calls the driver makes, no dependency beyond the standard library.
//
// # Usage
//
//	d, err := docker.New(docker.Config{Endpoint: "unix:///var/run/docker.sock"})
//	h, err := d.Start(ctx, driver.TaskConfig{..., Config: map[string]any{
//		"image":   "busybox:1.36",
//		"command": "httpd",
//		"args":    []any{"-f", "-p", "${NOMAD_PORT_http}"},
//	}})
//	res, err := h.Wait(ctx)
//
// A task's config block takes image (required), command, args,
// entrypoint, work_dir, network_mode ("host", the default, or "none";
// "bridge" is refused), ports (labels of the group's network block: in
// host mode the task listens on NOMAD_PORT_<label>), labels, volumes
// ("host:container[:ro]"), privileged (refused unless
// Config.AllowPrivileged), cap_add, cap_drop, force_pull,
// image_pull_timeout, auth, init, hostname, extra_hosts, dns_servers,
// dns_search_domains, dns_options, shm_size, pids_limit, readonly_rootfs,
// security_opt, mount (bind, tmpfs, volume), ulimit, devices and logging
// (json-file or local). Any other key, or a value of the wrong type, is a
// *driver.ConfigError naming the key. docs/docker.md is the manual.
//
// # Containers
//
// A container is named ordo-<task id> and labelled LabelAllocID,
// LabelTaskName and LabelTaskID. It gets the task's environment, with
// NOMAD_ALLOC_DIR, NOMAD_TASK_DIR and NOMAD_SECRETS_DIR set to /alloc,
// /local and /secrets, where the allocation's shared directory and the
// task's local/ and secrets/ are bind-mounted. The task's cpu becomes CPU
// shares, its memory a hard memory limit (no swap beyond it), which the
// daemon enforces. Start first removes any container of the same
// allocation and task: an attempt whose start the client did not live to
// record never runs beside the next one. Once a container has exited and
// its logs are written, it is removed (unless Config.KeepContainers).
// With Config.Owner, containers are labelled LabelOwner too, and Sweep
// (driver.Sweeper, which the client calls once its records are restored)
// removes the owner's containers of allocations the client does not know.
//
// # Image GC
//
// With Config.ImageGC, a goroutine of the driver removes, every
// ImageGCInterval, the images its tasks used that none of its tasks has
// run for ImageDelay and from which no container of the daemon was made
// by that name (imagegc.go).
//
// # Logs
//
// The driver follows the container's output through the API and writes
// it into TaskConfig.StdoutPath and StderrPath, rotating a file to <path>.1
// (driver.RotatedPath's names) before a write would take it past
// LogMaxBytes. While the client is down, the daemon keeps the output
// (json-file, capped at 4 MB per container by default). Messages come
// with the daemon's timestamps: a closing driver notes the last one
// written in a hidden file beside the stdout log (.<name>.since), and
// Recover resumes just after it; after a client that died without
// closing, from the log file's modification time, which is coarse, so a
// few lines of its last milliseconds may be written twice.
//
// # Stopping, signals and exit
//
// Stop sends the kill signal to the container's main process, waits up to
// the kill timeout on Config.Clock, then sends SIGKILL. A container's main
// process is PID 1 of its namespace, which the kernel protects from
// signals it does not handle: a shell that should die of SIGTERM needs
// init = true (docker-init forwards signals). An exit status above 128 is
// reported as death by signal status-128, as Docker reports it.
//
// # Re-attaching after a client restart
//
// Handle.State records the container's id, its task's labels, the log
// paths and the kill settings. Recover re-attaches only to that container
// still running with the same task id label; otherwise it returns
// driver.ErrTaskGone, removing an exited container.
//
// # Concurrency
//
// A Driver and its handles are safe for concurrent use. Each handle has
// one goroutine, which follows the logs (in a second goroutine it joins)
// and waits for the container; image GC has one. Close ends them without
// touching the containers and waits for them. The driver has one lock,
// held only to read or update its own fields, never across an API call.
//
// # Invariants
//
//   - Start returns a handle for a started container, or an error and no
//     container (one that fails to start is removed).
//   - At most one container per allocation and task, as far as this
//     driver started them.
//   - Time comes from Config.Clock only.
package docker
