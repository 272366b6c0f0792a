package chaos

import "syscall"

// childAttr kills a server when the process that started it dies, so a
// failed test leaves no server behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
