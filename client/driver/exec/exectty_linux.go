package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ordoplane/ordo/client/driver"
)

// openPTY opens a pseudo-terminal pair: the master, which the caller
// reads and writes, and the slave, the command's terminal.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	fd := int(master.Fd())
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0) // unlock the slave
	}
	if err == nil {
		slave, err = os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	return master, slave, nil
}

// execTTY runs cmd on a pseudo-terminal: the command leads a session of
// its own whose controlling terminal is the slave; its output (stdout and
// stderr alike) goes to req.Stdout, req.Stdin is typed into it, and
// req.Resize sets its size. The end of req.Stdin is not a hang-up: the
// command reads on until it exits.
func (h *handle) execTTY(ctx context.Context, cmd *osexec.Cmd, req driver.ExecRequest) (int, error) {
	master, slave, err := openPTY()
	if err != nil {
		return -1, fmt.Errorf("exec: %w", err)
	}
	defer master.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	slave.Close() // the command holds it now
	if err != nil {
		return -1, fmt.Errorf("exec: start %q in task %s: %w", req.Command[0], h.t.id, err)
	}
	var wg sync.WaitGroup
	output := make(chan struct{})
	go func() { // ends when the terminal has no holder left (EIO), joined below
		defer close(output)
		if req.Stdout != nil {
			_, _ = io.Copy(req.Stdout, master)
		} else {
			_, _ = io.Copy(io.Discard, master)
		}
	}()
	if req.Stdin != nil {
		wg.Go(func() { _, _ = io.Copy(master, req.Stdin) })
	}
	resizeCtx, stopResize := context.WithCancel(ctx)
	wg.Go(func() {
		for {
			select {
			case <-resizeCtx.Done():
				return
			case s := <-req.Resize:
				_ = unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ,
					&unix.Winsize{Row: uint16(s.Height), Col: uint16(s.Width)})
			}
		}
	})
	stop := context.AfterFunc(ctx, func() { _ = signalProcess(cmd.Process.Pid, sigkill, true) })
	werr := cmd.Wait()
	stop()
	_ = signalProcess(cmd.Process.Pid, sigkill, true) // what it left behind, so the terminal hangs up
	<-output
	stopResize()
	if c, ok := req.Stdin.(io.Closer); ok {
		c.Close()
	}
	wg.Wait()
	if _, ok := errors.AsType[*osexec.ExitError](werr); werr != nil && !ok {
		return -1, fmt.Errorf("exec: %w", werr)
	}
	return exitResult(cmd.ProcessState, nil).ExitCode, nil
}
