//go:build unix

package fleet

import (
	"fmt"
	"syscall"
)

// raiseFDLimit raises the soft RLIMIT_NOFILE to hold need open files,
// up to the hard limit (Go already raises it at start on Linux; this
// checks and names the problem).
func raiseFDLimit(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("simfleet: read RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur >= need {
		return nil
	}
	if lim.Max < need {
		return fmt.Errorf("simfleet: the fleet needs about %d open files and RLIMIT_NOFILE allows %d (hard); "+
			"raise it (ulimit -Hn) or simulate fewer nodes", need, lim.Max)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("simfleet: raise RLIMIT_NOFILE to %d: %w", lim.Max, err)
	}
	return nil
}
