package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	osexec "os/exec"
	"sync"

	"github.com/ordoplane/ordo/client/driver"
)

var (
	_ driver.Execer       = (*handle)(nil)
	_ driver.ProcessGroup = (*handle)(nil)
)

// PID implements driver.ProcessGroup.
func (h *handle) PID() int { return h.t.pid }

// Exec implements driver.Execer: req's command runs as a process of the
// host, in the task's directory and environment, in a process group of
// its own that is killed when ctx ends.
func (h *handle) Exec(ctx context.Context, req driver.ExecRequest) (int, error) {
	if len(req.Command) == 0 || req.Command[0] == "" {
		return -1, &driver.ConfigError{Key: "command", Reason: "is empty"}
	}
	select {
	case <-h.done:
		return -1, fmt.Errorf("exec: task %s: %w", h.t.id, errExited)
	default:
	}
	env := environ(req.Env)
	path, err := lookPath(req.Command[0], req.Dir, env)
	if err != nil {
		return -1, &driver.ConfigError{Key: "command", Reason: err.Error()}
	}
	cmd := &osexec.Cmd{Path: path, Args: req.Command, Env: env, Dir: req.Dir, SysProcAttr: sysProcAttr()}
	if req.TTY {
		return h.execTTY(ctx, cmd, req)
	}
	cmd.Stdout, cmd.Stderr = req.Stdout, req.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return -1, fmt.Errorf("exec: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("exec: start %q in task %s: %w", req.Command[0], h.t.id, err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if req.Stdin != nil {
			_, _ = io.Copy(stdin, req.Stdin)
		}
		stdin.Close()
	})
	return waitExec(ctx, cmd, req.Stdin, &wg)
}

// waitExec waits for cmd, killing its process group when ctx ends first,
// then closes stdin (when it is an io.Closer, so that a read blocked in it
// ends) and waits for wg, the copying of its input.
func waitExec(ctx context.Context, cmd *osexec.Cmd, stdin io.Reader, wg *sync.WaitGroup) (int, error) {
	stop := context.AfterFunc(ctx, func() { _ = signalProcess(cmd.Process.Pid, sigkill, true) })
	err := cmd.Wait()
	stop()
	_ = signalProcess(cmd.Process.Pid, sigkill, true) // what it left behind
	res := exitResult(cmd.ProcessState, nil)
	if _, ok := errors.AsType[*osexec.ExitError](err); err != nil && !ok {
		return -1, fmt.Errorf("exec: %w", err)
	}
	if c, ok := stdin.(io.Closer); ok {
		c.Close()
	}
	wg.Wait()
	return res.ExitCode, nil
}
