//go:build !linux

package chaos

import "syscall"

// childAttr has nothing to add outside Linux.
func childAttr() *syscall.SysProcAttr { return nil }
