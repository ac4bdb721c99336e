package supervisor

import "syscall"

// childAttr puts a child in its own process group (a terminal's Ctrl-C reaches only the
// supervisor, which then stops the children in order) and has the kernel send it SIGTERM when
// the supervisor dies, even by SIGKILL.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
