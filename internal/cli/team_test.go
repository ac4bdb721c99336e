package cli

import (
	"strings"
	"testing"
)

// service install refuses a hub's home: its units would run a member's suite there.
func TestServiceInstall_RefusesAHubHome(t *testing.T) {
	home := t.TempDir()
	if code, out, errOut := runCtl(t, "--home", home, "hub", "init", "--addr", "127.0.0.1:0"); code != 0 {
		t.Fatalf("hub init: exit %d %s %s", code, out, errOut)
	}
	code, _, errOut := runCtl(t, "--home", home, "service", "install", "--dry-run")
	if code != ExitUsage || !strings.Contains(errOut, "hub up -d") {
		t.Fatalf("service install on a hub's home: exit %d: %s", code, errOut)
	}
}
