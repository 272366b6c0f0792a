//go:build !linux

package dockertest

import "syscall"

// sysProcAttr puts the daemon in its own process group. (Docker's daemon
// runs on Linux only; Start fails before it gets here elsewhere.)
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// unmountUnder does nothing: only Linux daemons leave mounts.
func unmountUnder(string) {}
