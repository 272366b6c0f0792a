package fingerprint

import (
	"errors"
	"syscall"
)

var errUnsupported = errors.New("fingerprint: not supported on this system")

// diskSpace returns the bytes free (to unprivileged users) and in total of
// the file system holding dir.
func diskSpace(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}
