package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ordoplane/ordo/client/driver"
)

// supported reports whether this operating system can run exec tasks.
const supported = true

// errNoProcess is what procStat returns for a pid no process holds.
var errNoProcess = errors.New("no such process")

// procInfo is what /proc/<pid>/stat says about a process.
type procInfo struct {
	// state is the one-letter process state; Z (zombie) and X (dead)
	// mean it has exited.
	state byte
	// startTicks is when it started, in clock ticks after boot: with the
	// pid and the boot id, it names one process for the life of the host.
	startTicks uint64
}

func (p procInfo) exited() bool { return p.state == 'Z' || p.state == 'X' }

// procStat reads /proc/<pid>/stat; errNoProcess when there is none.
func procStat(pid int) (procInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return procInfo{}, errNoProcess
	}
	if err != nil {
		return procInfo{}, err
	}
	return parseStat(string(b))
}

// parseStat parses the text of /proc/<pid>/stat. The command name, field
// 2, is in parentheses and may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseStat(s string) (procInfo, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procInfo{}, fmt.Errorf("malformed stat %q", s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state), so field 22 (starttime) is f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, fmt.Errorf("malformed stat %q", s)
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procInfo{}, fmt.Errorf("malformed stat start time %q: %w", f[19], err)
	}
	return procInfo{state: f[0][0], startTicks: ticks}, nil
}

// bootID returns the kernel's id of the current boot.
func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("read boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// sysProcAttr starts the task as the leader of a new process group, so
// Stop reaches the processes it forks.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// waitExited blocks until the child pid has exited, without reaping it:
// while it is a zombie its pid, and so its process group id, cannot be
// reused.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// setAddressSpace sets the hard and soft RLIMIT_AS of process pid.
func setAddressSpace(pid int, bytes uint64) error {
	lim := unix.Rlimit{Cur: bytes, Max: bytes}
	if err := unix.Prlimit(pid, unix.RLIMIT_AS, &lim, nil); err != nil {
		return fmt.Errorf("set RLIMIT_AS of pid %d: %w", pid, err)
	}
	return nil
}

// signalProcess sends sig to process pid (group false) or to the process
// group it leads (group true); a target that is gone is not an error.
func signalProcess(pid, sig int, group bool) error {
	target := pid
	if group {
		target = -pid
	}
	if err := unix.Kill(target, syscall.Signal(sig)); err != nil && !errors.Is(err, unix.ESRCH) {
		return err
	}
	return nil
}

// exitResult turns a reaped child's status into an ExitResult; a task
// killed by a signal reports 128 + its number as the exit code.
func exitResult(ps *os.ProcessState, err error) driver.ExitResult {
	if err != nil {
		return driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("exec: wait: %w", err)}
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return driver.ExitResult{ExitCode: ps.ExitCode()}
	}
	if ws.Signaled() {
		return driver.ExitResult{ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return driver.ExitResult{ExitCode: ws.ExitStatus()}
}
