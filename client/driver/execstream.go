package driver

import (
	"context"
	"io"
)

// ExecRequest is a command to run beside a running task, in its
// environment and working directory (Nomad's exec streaming).
type ExecRequest struct {
	// Command is the program and its arguments; a bare name is looked up
	// in Env's PATH.
	Command []string
	// Env and Dir are the task's environment and working directory.
	Env map[string]string
	Dir string
	// TTY runs the command on a pseudo-terminal: Stdout carries its
	// output and Stderr nothing.
	TTY bool
	// Stdin feeds the command until it ends; when it is an io.Closer,
	// Exec closes it once the command has exited, so that a read blocked
	// in it ends. Stdout and Stderr receive the command's output.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Resize carries the caller's terminal sizes (TTY only); optional.
	Resize <-chan TerminalSize
}

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Height, Width int
}

// Execer is a Handle that can run commands beside its task.
type Execer interface {
	// Exec runs req to its end and returns its exit code (128 + the
	// signal's number when a signal ended it); it kills the command when
	// ctx ends.
	Exec(ctx context.Context, req ExecRequest) (int, error)
}

// ProcessGroup is a Handle whose task is a process group of the host.
type ProcessGroup interface {
	// PID returns the task's main process, the leader of its group.
	PID() int
}
