package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/events"
)

// ErrTaskGone is returned by Recover when the task a handle state names is
// no longer running.
var ErrTaskGone = errors.New("driver: task is no longer running")

// ConfigError is returned by Start when a task's configuration is invalid,
// so the client can fail the task instead of restarting it. Key names the
// field as the jobspec spells it: "config.command" for a key of the
// driver's config block, "kill_signal" for a task field.
type ConfigError struct {
	Key    string
	Reason string
}

// Error implements error.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("driver: invalid %s: %s", e.Key, e.Reason)
}

// ParseSignal returns the Linux number of a signal name: SIGHUP, SIGINT,
// SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2 or SIGTERM, in any case, with or
// without the SIG prefix; "" is SIGTERM, the default kill signal.
func ParseSignal(name string) (int, error) {
	if _, n, ok := events.KillSignal(name); ok {
		return n, nil
	}
	return 0, fmt.Errorf("driver: unknown signal %q (want SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2 or SIGTERM)", name)
}

// Driver runs tasks of one kind.
type Driver interface {
	// Name is the name jobs use in a task's driver field.
	Name() string
	// Fingerprint reports whether the driver can run tasks on this node,
	// with attributes to publish (e.g. "driver.exec.version").
	Fingerprint() Fingerprint
	// Start starts the task and returns its handle.
	Start(ctx context.Context, cfg TaskConfig) (Handle, error)
	// Recover re-attaches to a task started by an earlier client process
	// from the state its handle reported; ErrTaskGone if it is not running.
	Recover(ctx context.Context, state HandleState) (Handle, error)
}

// Fingerprint is what a driver reports about itself.
type Fingerprint struct {
	Detected   bool
	Healthy    bool
	Attributes map[string]string
}

// TaskConfig is everything a driver needs to start one task.
type TaskConfig struct {
	// AllocID and Task name the task; ID is unique per start of it (the
	// client adds the restart count), for logs and handle states.
	AllocID string
	Task    string
	ID      string
	// Config is the task's driver configuration from the jobspec.
	Config map[string]any
	// Env is the task's environment (NOMAD_*-style variables included).
	Env map[string]string
	// Dir is the task's working directory, created by the client.
	Dir string
	// StdoutPath and StderrPath are the files the task's output goes to;
	// the driver rotates them at LogMaxBytes, keeping LogMaxFiles.
	StdoutPath, StderrPath string
	LogMaxBytes            int64
	LogMaxFiles            int
	// CPU (MHz) and MemoryMB are the task's resources, enforced where the
	// operating system allows it without root-only features.
	CPU, MemoryMB int
	// MemoryMaxMB is the task's memory_max (0 when unset): a driver that
	// can set a hard limit above a soft one (docker) limits the task to it
	// and reserves MemoryMB; others ignore it.
	MemoryMaxMB int
	// KillSignal is the signal Stop sends first ("SIGINT", "SIGTERM"…;
	// default SIGTERM); KillTimeout how long Stop waits before killing.
	KillSignal  string
	KillTimeout time.Duration
}

// HandleState is what the client persists about a running task so a new
// client process can re-attach to it. Drivers fill Data as they need.
type HandleState struct {
	Driver  string
	TaskID  string
	Started time.Time
	Data    map[string]string
}

// ExitResult is how a task ended.
type ExitResult struct {
	// ExitCode is the task's exit status; a task killed by a signal
	// reports 128 + the signal's number, as a shell does.
	ExitCode int
	// Signal is the signal that killed it, 0 if none.
	Signal int
	// OOMKilled is set when the task was killed for exceeding its memory
	// limit (drivers that enforce one and can tell, e.g. docker).
	OOMKilled bool
	// Err is set when the task could not be waited on (e.g. it vanished
	// while the client was away).
	Err error
}

// Successful reports whether the task exited on its own with code 0.
func (r ExitResult) Successful() bool { return r.ExitCode == 0 && r.Signal == 0 && r.Err == nil }

// Handle is a running task.
type Handle interface {
	// Wait blocks until the task exits or ctx ends.
	Wait(ctx context.Context) (ExitResult, error)
	// Signal sends sig (e.g. "SIGHUP") to the task.
	Signal(sig string) error
	// Stop sends the kill signal, waits up to the kill timeout, then kills
	// the task; it returns when the task has exited or ctx ends.
	Stop(ctx context.Context) error
	// State is what to persist to re-attach with Recover.
	State() HandleState
}
