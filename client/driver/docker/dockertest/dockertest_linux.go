package dockertest

import (
	"os"
	"strings"
	"syscall"
)

// sysProcAttr puts the daemon in its own process group, so that a signal
// to the test's group (Ctrl-C) leaves it to Stop, which shuts it down
// cleanly; and has it sent SIGTERM when the test process dies without
// stopping it (a test timeout's panic, a kill), so that no daemon
// outlives its tests.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			points = append(points, f[4])
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		_ = syscall.Unmount(points[i], syscall.MNT_DETACH)
	}
}
