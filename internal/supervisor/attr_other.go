//go:build !linux

package supervisor

import "syscall"

// childAttr puts a child in its own process group. Without Pdeathsig, children notice the
// supervisor's death by their parent pid changing (see daemon.WatchParent).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
