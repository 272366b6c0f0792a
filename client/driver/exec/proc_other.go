//go:build !linux

package exec

import (
	"errors"
	"os"
	"syscall"

	"github.com/ordoplane/ordo/client/driver"
)

// supported reports whether this operating system can run exec tasks.
const supported = false

var (
	errNoProcess   = errors.New("no such process")
	errUnsupported = errors.New("exec: only Linux is supported")
)

type procInfo struct {
	state      byte
	startTicks uint64
}

func (p procInfo) exited() bool          { return true }
func procStat(int) (procInfo, error)     { return procInfo{}, errUnsupported }
func bootID() (string, error)            { return "", errUnsupported }
func sysProcAttr() *syscall.SysProcAttr  { return nil }
func waitExited(int) error               { return errUnsupported }
func setAddressSpace(int, uint64) error  { return errUnsupported }
func signalProcess(int, int, bool) error { return errUnsupported }
func exitResult(*os.ProcessState, error) driver.ExitResult {
	return driver.ExitResult{ExitCode: -1, Err: errUnsupported}
}
