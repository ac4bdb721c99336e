package supervisor

import (
	"os/exec"
	"syscall"
	"testing"
)

// The supervisor's log says how a child ended in words a user can search for: "killed by SIGKILL
// (9)", not "killed by killed".
func TestExitText(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		want string
	}{{syscall.SIGKILL, "killed by SIGKILL (9)"}, {syscall.SIGTERM, "killed by SIGTERM (15)"}, {syscall.SIGSEGV, "killed by SIGSEGV (11)"}} {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmd.Process.Signal(tc.sig)
		if got := exitText(cmd.Wait()); got != tc.want {
			t.Errorf("exitText after %v = %q, want %q", tc.sig, got, tc.want)
		}
	}
	if got := exitText(exec.Command("sh", "-c", "exit 3").Run()); got != "exit 3" {
		t.Errorf("exitText(exit 3) = %q", got)
	}
	if got := exitText(nil); got != "exit 0" {
		t.Errorf("exitText(nil) = %q", got)
	}
}
