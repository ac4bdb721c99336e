package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigBrokenWhileRunning: config.toml broken (a syntax error) while the suite runs. Hooks
// still deliver; status, restart and down still work, on the configuration that last loaded, and
// say so; a restarted component comes back healthy on it.
func TestConfigBrokenWhileRunning(t *testing.T) {
	s := newSuite(t)
	s.start()
	path := filepath.Join(s.home, "config.toml")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(good, []byte("\n[hook]\ntimeout = \"2s\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		_, errOut, code := s.ctl(hookPayload("broken", i), "hook")
		if code != 0 || !strings.Contains(errOut, "config.toml") {
			t.Fatalf("hook with a broken config: exit %d, stderr %q", code, errOut)
		}
	}
	s.waitCount(20*time.Second, 5, "SELECT count(*) FROM hook_events WHERE tool_use_id LIKE 'broken-%'")

	out, errOut, code := s.ctl(nil, "status")
	if code != 0 || !strings.Contains(out, "writer") || !strings.Contains(errOut, "last configuration that loaded") {
		t.Fatalf("status with a broken config: exit %d\n%s\n%s", code, out, errOut)
	}
	oldPID := s.componentPID("writer")
	if _, errOut, code := s.ctl(nil, "restart", "writer"); code != 0 {
		t.Fatalf("restart with a broken config: exit %d %s", code, errOut)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, code := s.status()
		if pid := s.componentPID("writer"); code == 0 && pid != 0 && pid != oldPID {
			_ = st
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writer not back healthy after restart with a broken config:\n%s", s.readFile("logs/writer.log"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The new writer's pid shows in status as soon as it runs, maybe before its first log line.
	s.waitLog("writer", "config.toml not applied", 1)
	if _, errOut, code := s.ctl(hookPayload("broken", 99), "hook"); code != 0 {
		t.Fatalf("hook after restart: exit %d %s", code, errOut)
	}
	s.waitCount(20*time.Second, 6, "SELECT count(*) FROM hook_events WHERE tool_use_id LIKE 'broken-%'")

	if _, errOut, code := s.ctl(nil, "down"); code != 0 {
		t.Fatalf("down with a broken config: exit %d %s", code, errOut)
	}
	select {
	case <-s.upCh:
		s.up = nil
	case <-time.After(30 * time.Second):
		t.Fatal("the suite did not stop after down")
	}
}
