package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// errNoMount says this process may not mount: publish by symlink.
var errNoMount = errors.New("mounting not permitted")

// bindMount bind-mounts dir at target (a directory it creates), read-only
// when asked; errNoMount when not root or the kernel refuses (no
// CAP_SYS_ADMIN in a container).
func bindMount(dir, target string, readOnly bool) error {
	if os.Geteuid() != 0 {
		return errNoMount
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount(dir, target, "", syscall.MS_BIND, ""); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			return errNoMount
		}
		return err
	}
	if readOnly {
		if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			_ = syscall.Unmount(target, 0)
			return err
		}
	}
	return nil
}

// mounted reports whether target is a mount point (its device differs
// from its parent's, or it is bind-mounted: listed in /proc/self/mountinfo).
func mounted(target string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	abs, _ := filepath.Abs(target)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == abs {
			return true
		}
	}
	return false
}

func unmount(target string) error { return syscall.Unmount(target, 0) }
